"""Run a student's code in an isolated process and call it through a narrow channel.

The grader never executes a student's code itself. :class:`Sandbox` starts
:mod:`dpkit.course.worker` under `bubblewrap <https://github.com/containers/bubblewrap>`_:

* **as an unprivileged user in a user namespace of its own** (``nobody`` when the grader
  runs as root; otherwise the grader's user), which owns nothing outside it and takes
  with it, when the worker ends, what the kernel keeps per user (keyrings);
* **seeing almost nothing**: a fresh root holding only ``/usr``, the Python installation,
  the installed ``dpkit`` package without its checkers (read-only) and the data file it
  reads, plus an empty private ``/tmp``; no course folder, no hidden tests, no gradebook,
  no other submission, no home directory, no ``/proc`` of other processes;
* **cut off**: no network (a new network namespace), no other IPC (System V objects and
  message queues live in its own IPC namespace, abstract sockets in its network
  namespace, ``/dev/shm`` and ``/tmp`` in its own memory), its own PID namespace, killed
  with the grader; the system calls that reach kernel state beyond the sandbox (keyrings,
  other processes' memory, kernel tracing) are refused (:mod:`dpkit.course.syscalls`);
* **limited**: CPU time, address space, number of processes, file size and open files
  (:class:`Limits`), a limit on every request, and one on all the requests of the
  sandbox together, across restarts of the worker (``submission_seconds``), which the
  grader enforces in CPU time, that of the sandbox's processes read from ``/proc``
  (:mod:`dpkit.course.cputime`), each with a wall-clock backstop ``wall_factor`` times as
  long: a loaded grading machine does not fail a correct answer (honest review 16, C3).
  The kernel's CPU limit is per process and the same for every worker (what a worker can
  read of it tells it nothing of the workers before it).

The two processes exchange JSON lines (:mod:`dpkit.course.wire`) over two pipes: the
grader sends cells to run, names to read and functions to call with their arguments; the
worker replies with plain values or the error its code raised. Objects of the grader's
that a call needs (a query, a random source, a stream) are passed by reference and stay
in the grader: the worker's proxy asks for each use, and only the uses such an object is
for are served (calling a query, drawing from a random source, iterating a stream; no
attribute is ever read: :class:`~dpkit.course.lending.Lent`). A bits-only source is lent
in blocks of bits, so that a sampler reading one bit at a time does not make a request per
bit (:class:`dpkit.course.worker.RemoteSource`). A randomized exercise's check that a cell
shows is run here, on the student's function in the worker, as in a notebook, its verdict
thrown away (:mod:`dpkit.course.showing`).

When bubblewrap is missing, or the machine forbids the namespaces it needs, grading stops
with :class:`SandboxUnavailable` unless the caller asked for ``unsafe=True``, which runs
the worker as a plain child process (rlimits only; the student's code can then read what
the grader's user can read) and says so in the log.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import fcntl
import json
import math
import os
import platform
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from dpkit.course import syscalls
from dpkit.course.cputime import POLL, CpuClock
from dpkit.course.lending import Lent
from dpkit.course.showing import run_shown
from dpkit.course.wire import GeneratorState, WireError, decode, dumps, encode, loads

__all__ = ["Limits", "RemoteFunction", "Sandbox", "SandboxUnavailable", "StudentError",
           "isolation"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,59}")


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one worker may use (the kernel enforces the first six; the grader the time
    limits, which count the CPU time of the sandbox's processes, so that a grading machine
    under load does not fail a correct answer: honest review 16, C3)."""

    cpu_seconds: int = 600           #: CPU time of the whole worker
    memory_bytes: int = 4 << 30      #: address space (NumPy and SciPy map about 1 GiB)
    processes: int = 72              #: processes and threads of the sandbox (64 of its
    #: own, and the 8 idle threads that make it read as a kernel: :mod:`.worker`), counted
    #: in its own user namespace, apart from any other sandbox's (Linux 5.14 and later)
    file_bytes: int = 64 << 20       #: largest file it may write (in its private /tmp)
    open_files: int = 256
    tmp_bytes: int = 64 << 20        #: size of its private /tmp
    call_seconds: float = 60.0       #: CPU time of one request
    exercise_seconds: float = 300.0  #: CPU time of all the requests of one test
    #: CPU time of all the requests of one sandbox (one submission), whatever the restarts;
    #: every worker's RLIMIT_CPU is ``cpu_seconds``, at most this
    submission_seconds: float = 1800.0
    #: each time limit's wall-clock backstop is this many times it (an answer that waits
    #: without computing, ``time.sleep``, spends no CPU time)
    wall_factor: float = 4.0


class SandboxUnavailable(RuntimeError):
    """Raised when no sandbox can be made and unsafe grading was not asked for."""


class StudentError(Exception):
    """An error a student's code raised in the sandbox whose type is not a builtin one."""


def _bwrap() -> str | None:
    return shutil.which("bwrap")


def _package() -> Path:
    import dpkit

    return Path(dpkit.__file__).resolve().parent


def _binds() -> list[Path]:
    """What the worker must read: the Python installation, dpkit, the data it loads."""
    from dpkit.datasets import adult_path

    paths = {Path(sys.base_prefix), Path(sys.prefix), _package(), adult_path().resolve()}
    paths |= {Path(p).resolve() for p in sys.path
              if p and Path(p).is_dir() and "site-packages" in p}
    paths = {p for p in paths if not str(p).startswith("/usr/")}
    return sorted(p for p in paths if p.exists() and str(p) != "/usr")


def _empty_file() -> Path:
    """An empty, read-only file on the host, bound over the grader's modules in the sandbox."""
    path = Path(tempfile.gettempdir()) / f"dpkit-sandbox-empty-{os.getuid()}"
    if not path.is_file() or path.stat().st_size:
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as handle:
            pass
        os.chmod(handle.name, 0o444)
        os.replace(handle.name, path)
    return path


def _parents(paths: list[Path]) -> list[Path]:
    parents = {q for p in paths for q in p.parents if str(q) != "/"}
    return sorted(parents, key=lambda q: len(q.parts))


def _namespaces() -> list[str]:
    """bubblewrap and its options for the namespaces of every sandbox (and of its probe).

    When the grader is not root, bubblewrap makes the sandbox's user namespace (mapping the
    grader's user to itself, with no capability); as root, it makes the other namespaces
    only, and :func:`_user` makes the user namespace as ``nobody``."""
    command = [_bwrap() or "bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc",
               "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
               "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
               "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin"]
    if os.geteuid() != 0:
        command[1:1] = ["--unshare-user", "--cap-drop", "ALL"]
    return command


def _user(processes: int) -> list[str]:
    """What the sandbox runs before the worker: as ``nobody`` in a user namespace of its
    own, with at most ``processes`` processes and threads.

    A user namespace per worker (not the initial one, where all ran as uid 65534) keeps
    what the kernel keys by user from one worker to the next: the user's keyrings belong
    to the namespace (adversarial review 12, F1: uid 65534's keyring carried what a worker
    saw to the next "fresh" one), and so does the count of its processes. As root,
    ``setpriv`` makes the sandbox ``nobody`` (no capability, no new privileges) and
    ``unshare`` makes the namespace; otherwise bubblewrap made it (:func:`_namespaces`).

    The process limit is set last, inside the namespace (``prlimit``): Linux (5.14 and
    later) counts RLIMIT_NPROC per user and namespace, and checks a namespace's creator
    against the limit it had when it made it. Set there, it counts this sandbox's processes
    and threads only, and parallel sandboxes (two grading jobs) no longer share one count
    of 72 (honest review 12, finding 4: ``ThreadPoolExecutor(8)`` failed while another
    sandbox held threads); set before, it would count all of the user's processes."""
    command = []
    if os.geteuid() == 0:
        command += [shutil.which("setpriv") or "setpriv", "--reuid=65534", "--regid=65534",
                    "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
                    "--no-new-privs", "--", shutil.which("unshare") or "unshare", "--user",
                    "--map-user=65534", "--map-group=65534", "--"]
    return [*command, shutil.which("prlimit") or "prlimit",
            f"--nproc={processes}:{processes}", "--"]


def _command(limits: Limits, fds: tuple[int, int], opened: list[int]) -> list[str]:
    """The command line that starts the worker under bubblewrap, with the system-call
    filter (:mod:`dpkit.course.syscalls`) read from a file descriptor that is appended to
    ``opened``, for the caller to pass to it and close."""
    command = [*_namespaces(), "--proc", "/proc", "--dev", "/dev"]
    # A private /dev/shm the worker can write, as a notebook's: multiprocessing's locks and
    # pools live there (honest review 13, F3: they failed as nobody on root's /dev/shm).
    command += ["--perms", "01777", "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm"]
    # The private /tmp first: what is bound later (a clone under /tmp, say) stays visible.
    command += ["--perms", "01777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    command += ["--perms", "0755", "--dir", "/etc"]   # a system's root has one (review 13)
    command += ["--perms", "01777", "--dir", KERNEL_HOME]      # a notebook user's home
    binds = _binds()
    for parent in _parents(binds):
        if parent not in binds:
            command += ["--perms", "0755", "--dir", str(parent)]
    for path in binds:
        command += ["--ro-bind", str(path), str(path)]
    # The checkers are not there: a value answer could otherwise be searched for with its
    # own public check (the tests run in the grader, which has them). The worker puts a
    # stand-in with the same names in their place (worker.stand_in_checks).
    command += ["--tmpfs", str(_package() / "check")]
    # Nor is the grader: its judges and their docstrings (the hidden tests' ranges and
    # statistics) are not the student's to read. The worker needs only these five modules.
    course = _package() / "course"
    command += ["--tmpfs", str(course / "judges")]
    for module in sorted(course.glob("*.py")):
        if module.name not in ("__init__.py", "worker.py", "wire.py", "kernel.py", "magics.py"):
            command += ["--ro-bind", str(_empty_file()), str(module)]
    command += ["--chdir", "/tmp", "--clearenv"]
    for name, value in _environment(fds).items():
        command += ["--setenv", name, value]
    seccomp = syscalls.descriptor()
    if seccomp is not None:
        opened.append(seccomp)
        command += ["--seccomp", str(seccomp)]
    return [*command, "--", *_user(limits.processes), sys.executable, *_worker()]


def _worker() -> list[str]:
    """The interpreter's arguments that start the worker from the grader's own dpkit (not
    the one an editable install may point to: only the grader's is visible inside).

    No ``-I``: ``sys.flags`` must read as a kernel's, all zero (adversarial review 11, F2:
    ``if sys.flags.isolated``). What ``-I`` kept out stays out: the environment is the
    worker's own (:func:`_environment`: bubblewrap's ``--clearenv``, or a fresh one), no
    user site exists under :data:`KERNEL_HOME`, and the working folder ``-c`` puts first in
    ``sys.path`` is replaced by the package's: the worker imports what it needs before any
    cell runs, and only then puts ``''`` where a kernel has it
    (:func:`dpkit.course.worker.main`)."""
    return ["-c", "import sys; sys.path[0] = sys.argv.pop(1); import runpy; "
            "runpy.run_module('dpkit.course.worker', run_name='__main__', alter_sys=True)",
            str(_package().parent)]


#: The worker's ``HOME``: a user's home, as a notebook's kernel has it (``/tmp`` told the
#: sandbox from a notebook: adversarial review 10, A2b).
KERNEL_HOME = "/home/student"
#: The worker's ``MPLBACKEND``: the one ``ipykernel`` sets in a notebook's kernel (``Agg``
#: told the sandbox from a notebook; figures shown are printed as text, as ``Agg`` shows
#: nothing).
KERNEL_MPLBACKEND = "module://matplotlib_inline.backend_inline"


def _environment(fds: tuple[int, int]) -> dict[str, str]:
    """The worker's environment. Reading it is refused in the answers to randomized
    exercises (:func:`~dpkit.course.exercises.environment_use`); where it is cheap, it
    reads as a notebook's kernel would (``HOME``, ``MPLBACKEND``)."""
    threads = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    return {"PATH": "/usr/bin", "HOME": KERNEL_HOME, "MPLBACKEND": KERNEL_MPLBACKEND,
            "MPLCONFIGDIR": "/tmp",
            "DPKIT_WORKER_FDS": f"{fds[0]},{fds[1]}",
            "DPKIT_CHECK_NAMES": json.dumps(check_names()), **threads}


def check_names() -> dict[str, list[str]]:
    """The public names of :mod:`dpkit.check` (key ``""``) and of each of its submodules:
    the worker's stand-in for the checkers, which are not in the sandbox, has them
    (:func:`dpkit.course.worker.stand_in_checks`)."""
    import dpkit.check

    def public(module: types.ModuleType) -> list[str]:
        return sorted(n for n, v in vars(module).items() if (n == "Verdict" or n.startswith(
            "check_")) and getattr(v, "__module__", "").startswith("dpkit.check"))

    found = {"": public(dpkit.check)}
    for name, module in sorted(vars(dpkit.check).items()):
        if isinstance(module, types.ModuleType) and not name.startswith("_") and \
                module.__name__ == f"dpkit.check.{name}":
            found[name] = public(module)
    return found


def _plain_command(fds: tuple[int, int]) -> tuple[list[str], dict[str, str]]:
    environment = {**_environment(fds), "PATH": os.environ.get("PATH", "/usr/bin")}
    return [sys.executable, *_worker()], environment


def _worker_limits(limits: Limits) -> Limits:
    """The limits of every worker: the CPU limit is ``cpu_seconds``, at most the
    submission's ``submission_seconds``, the same for each worker of a submission.

    It used to be what the submission had left, which a worker could read
    (``resource.getrlimit``) and an earlier worker could set by spending time: a channel
    from one worker to the next (adversarial review 12, F5). RLIMIT_CPU starts afresh in
    each worker, so the time all of them take together is enforced in the grader, which
    reads their CPU time (:attr:`Sandbox.left`)."""
    return dataclasses.replace(limits, cpu_seconds=max(1, min(
        limits.cpu_seconds, math.ceil(limits.submission_seconds))))


def _used_up(limits: Limits) -> str:
    return (f"your notebook used up the {limits.submission_seconds:g} s of CPU time its "
            "grading may take (all its cells and tests together), and was stopped")


def _set_limits(limits: Limits, *, processes: bool) -> Callable[[], None]:
    """Set the worker's resource limits in the child before it runs its command; the
    process limit only if ``processes`` (in a sandbox, it is set inside: :func:`_command`)."""
    def apply() -> None:
        for kind, value in ((resource.RLIMIT_CPU, limits.cpu_seconds),
                            (resource.RLIMIT_AS, limits.memory_bytes),
                            (resource.RLIMIT_NPROC, limits.processes if processes else None),
                            (resource.RLIMIT_FSIZE, limits.file_bytes),
                            (resource.RLIMIT_NOFILE, limits.open_files),
                            (resource.RLIMIT_CORE, 0)):
            if value is not None:
                resource.setrlimit(kind, (value, value))
    return apply


def _per_sandbox_processes() -> bool:
    """Whether this kernel counts RLIMIT_NPROC per user namespace (Linux 5.14 and later),
    so that each sandbox has its own process limit (:func:`_user`)."""
    found = re.match(r"(\d+)\.(\d+)", platform.release())
    return found is not None and (int(found[1]), int(found[2])) >= (5, 14)


def isolation(*, unsafe: bool = False) -> str:
    """Describe the isolation grading will use, after checking that it works (a probe
    sandbox made as the workers' are: user, namespaces, system-call filter, limits).

    Parameters
    ----------
    unsafe : bool
        Whether to describe a plain child process, instead of raising, when no sandbox
        can be made.

    Returns
    -------
    str
        One line for the grading log: starts with ``bubblewrap sandbox`` when workers
        will run in one, with ``UNSAFE`` otherwise.

    Raises
    ------
    SandboxUnavailable
        If bubblewrap is missing or cannot create its namespaces, and ``unsafe`` is False.
    """
    who = "as user nobody" if os.geteuid() == 0 else "as your user"
    if _bwrap() is not None:
        seccomp = syscalls.descriptor()
        fds = () if seccomp is None else (seccomp,)
        options = [] if seccomp is None else ["--seccomp", str(seccomp)]
        try:
            probe = subprocess.run([*_namespaces(), "--proc", "/proc", *options, "--",
                                    *_user(8), "/usr/bin/true"], pass_fds=fds,
                                   capture_output=True, text=True, timeout=30)
        finally:
            if seccomp is not None:
                os.close(seccomp)
        if probe.returncode == 0:
            calls = ("system calls to keyrings, other processes and kernel tracing refused"
                     if seccomp is not None else "no system-call filter for a "
                     f"{platform.machine()} machine")
            count = ("counted per sandbox" if _per_sandbox_processes() else
                     "counted per user, shared by all sandboxes: Linux before 5.14")
            return (f"bubblewrap sandbox ({who} in a user namespace of its own; no network; "
                    f"read-only Python and dpkit; private /tmp; {calls}; CPU, memory and "
                    f"process limits, processes {count})")
        reason = f"bubblewrap cannot create its namespaces here: {probe.stderr.strip()}"
    else:
        reason = "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if not unsafe:
        raise SandboxUnavailable(
            f"grading runs each submission in a sandbox, and {reason}. Install it, or, only "
            "for submissions you trust, pass --unsafe-no-sandbox (the students' code then "
            "runs with your user's rights and can read the course's files).")
    return f"UNSAFE: no sandbox ({reason}); student code runs as a plain child process"


def _student_error(reply: Any) -> Exception:
    """The exception a student's code raised, rebuilt from its type name and message."""
    if not isinstance(reply, dict):
        return StudentError("the sandbox sent a malformed error")
    name = str(reply.get("type", "Exception"))
    message = str(reply.get("message", ""))[:2000]
    error_type = getattr(builtins, name, None)
    if (isinstance(error_type, type) and issubclass(error_type, Exception)
            and not issubclass(error_type, (StopIteration, StopAsyncIteration))):
        try:
            return error_type(message)
        except TypeError:                       # e.g. UnicodeDecodeError's signature
            pass
    safe = name if _NAME.fullmatch(name) else "StudentError"
    return type(safe, (StudentError,), {})(message)


class _Broken(Exception):
    """The worker stopped answering as it should: ``why`` for the log (None: it ended),
    ``error`` for the student."""

    def __init__(self, why: str | None, error: Exception) -> None:
        super().__init__(why)
        self.why, self.error = why, error


class _Pipes:
    """The two pipes to a worker: JSON lines out (non-blocking, so a worker that stops
    reading cannot block the grader) and in, each with a deadline."""

    def __init__(self, send_fd: int, read_fd: int) -> None:
        self.send_fd, self.read_fd, self.pending = send_fd, read_fd, b""
        flags = fcntl.fcntl(send_fd, fcntl.F_GETFL)
        fcntl.fcntl(send_fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)

    def close(self) -> None:
        with contextlib.suppress(OSError):      # non-blocking: never waits on the worker
            os.write(self.send_fd, dumps({"op": "exit"}))
        os.close(self.send_fd)
        os.close(self.read_fd)

    def write(self, message: dict[str, Any], deadline: float) -> None:
        data = dumps(message)
        while data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [self.send_fd], [], left)[1]:
                raise _Broken("it stopped reading the grader's messages", TimeoutError(
                    "your code stopped reading what the grader sent it"))
            try:
                data = data[os.write(self.send_fd, data):]
            except BlockingIOError:
                continue
            except OSError as error:
                raise _Broken("it closed its input", RuntimeError(
                    "the sandbox stopped reading requests")) from error

    def read(self, deadline: float, seconds: float, why: str = "",
             over: Callable[[], bool] = lambda: False) -> dict[str, Any]:
        """The next message, waiting until ``deadline`` (the wall clock's backstop) or
        until ``over()`` (the request's CPU time is used up; asked every
        :data:`~dpkit.course.cputime.POLL` s at least)."""
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or over():
                raise _Broken(f"a request ran past {seconds:g} s", TimeoutError(
                    why or f"your code used more than {seconds:g} s of CPU time, or the "
                    "time this test may take, and was stopped"))
            if not select.select([self.read_fd], [], [], min(left, POLL))[0]:
                continue
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                raise _Broken(None, RuntimeError("your code stopped the sandbox"))
            self.pending += chunk
            if len(self.pending) > (64 << 20) + 1 and b"\n" not in self.pending:
                raise _Broken("it sent a message over 64 MiB", RuntimeError(
                    "your code sent more data than the grader accepts"))
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            return loads(line)
        except WireError:
            return {}


class Sandbox:
    """One worker process holding one submission's namespace (see the module docstring).

    Use as a context manager; :meth:`run` the cells, then :meth:`get` values and
    :meth:`function` proxies that the checkers call like local functions.

    Its time (:class:`Limits`): ``left``, the CPU seconds its requests may still take (the
    submission's, whatever the restarts), and ``wall_left``, that limit's wall-clock
    backstop; ``test_left``, the CPU seconds the current test may still take, and
    ``deadline``, when its backstop is up (``time.monotonic()``), set by the grader per
    test. A request stops when its worker's CPU time reaches ``_cpu_end`` (read by
    ``_clock``, :class:`~dpkit.course.cputime.CpuClock`).
    """

    def __init__(self, limits: Limits | None = None, *, unsafe: bool = False) -> None:
        self.limits = limits or Limits()
        self.unsafe = unsafe
        self.isolation = isolation(unsafe=unsafe)
        self._process: subprocess.Popen[bytes] | None = None
        self._lent = Lent()
        self._next_id = 0
        self.stopped: str | None = None      # why the worker was stopped, if it was
        self.deadline, self.test_left = math.inf, math.inf
        self.left = self.limits.submission_seconds
        self.wall_left = self.limits.submission_seconds * self.limits.wall_factor
        self._cpu_end, self._clock = math.inf, CpuClock(None)
        #: Whether the message of an error the student's code raised is kept (else only its
        #: type and ``where`` cross): grading stops quoting once hidden inputs have been
        #: lent, since a message could carry them (adversarial review round 7, N11).
        self.quoted: Callable[[str], bool] = lambda _message: True

    # -------------------------------------------------------------------- life cycle
    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start a fresh worker (a previous one is stopped first)."""
        self.close()
        to_worker, from_grader = os.pipe()
        from_worker, to_grader = os.pipe()
        worker_fds = (to_worker, to_grader)
        plain = self.unsafe and not self.isolation.startswith("bubblewrap")
        opened = [to_worker, to_grader]
        try:
            if plain:
                command, environment = _plain_command(worker_fds)
            else:
                command, environment = _command(self.limits, worker_fds, opened), {}
            self._process = subprocess.Popen(
                command, pass_fds=opened, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=environment or None,
                preexec_fn=_set_limits(_worker_limits(self.limits), processes=plain),
                start_new_session=True)
        finally:
            for fd in opened:
                os.close(fd)
        self._pipes = _Pipes(from_grader, from_worker)
        self.stopped, self._clock = None, CpuClock(self._process.pid)
        self.deadline = math.inf

    def close(self) -> None:
        """Stop the worker and everything it started."""
        process, self._process = self._process, None
        if process is None:
            return
        self._pipes.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=2)
        _kill(process)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # -------------------------------------------------------------------- requests
    def run(self, cells: list[str], names: list[str] | None = None) -> list[Exception | None]:
        """Execute ``cells`` in order; the error each raised (None where none).

        ``names`` name the cells in the errors' ``where`` ("your answer to Exercise 3.2,
        line 4"; by default "cell 1", "cell 2", ... of this request)."""
        reply = self._request({"op": "run", "cells": [str(c) for c in cells],
                               "names": [str(n) for n in names or []]},
                              self.limits.call_seconds * max(1, len(cells)))
        errors = reply.get("errors")
        if not isinstance(errors, list) or len(errors) != len(cells):
            raise RuntimeError("the sandbox sent a malformed reply")
        return [None if e is None else _reply_error(e, self.quoted) for e in errors]

    def get(self, name: str) -> Any:
        """The value of ``name`` in the notebook's namespace."""
        return self._result(self._request({"op": "get", "name": name},
                                          self.limits.call_seconds))

    def call(self, name: str | int, *args: Any, **kwargs: Any) -> Any:
        """Call the notebook's function ``name``; its result, or the error it raised.

        ``name`` is an ``int`` for what a check shown in a cell was given, while that
        check runs here (:mod:`dpkit.course.showing`). A NumPy generator among the
        arguments is sent by value and takes back the state the call left it in
        (:class:`~dpkit.course.wire.GeneratorState`)."""
        generators: list[np.random.Generator] = []
        try:
            message = {"op": "call", ("handle" if isinstance(name, int) else "name"): name,
                       "args": encode([_by_value(a, generators) for a in args],
                                      self._lent.lend),
                       "kwargs": encode({k: _by_value(v, generators)
                                         for k, v in kwargs.items()}, self._lent.lend)}
            reply = self._request(message, self.limits.call_seconds)
            _take_back(reply.get("generators"), generators)
            return self._result(reply)
        finally:
            self._lent.clear()

    def is_function(self, name: str) -> bool:
        """Whether the notebook's ``name`` is callable (a ``def`` or a bound function)."""
        return self._result(self._request({"op": "callable", "name": name},
                                          self.limits.call_seconds)) is True

    def function(self, name: str) -> RemoteFunction:
        """A local stand-in for the notebook's function ``name``."""
        return RemoteFunction(self, name)

    # -------------------------------------------------------------------- the channel
    def _result(self, reply: dict[str, Any]) -> Any:
        if reply.get("op") == "result":
            return decode(reply.get("value"))
        if reply.get("op") == "error":
            raise _reply_error(reply, self.quoted)
        raise RuntimeError("the sandbox sent a malformed reply")

    def _request(self, message: dict[str, Any], seconds: float) -> dict[str, Any]:
        if not self.alive:
            raise RuntimeError(f"the sandbox is not running ({self.stopped or 'not started'})")
        self._next_id += 1
        ident = self._next_id
        if self.left <= 0 or self.wall_left <= 0:
            raise TimeoutError(_used_up(self.limits))
        start = time.monotonic()
        if start >= self.deadline or self.test_left <= 0:
            raise TimeoutError("your code used up the time this test may take")
        clock, first, outer = self._clock, self._clock.read(), self._cpu_end
        deadline, self._cpu_end, why = _request_limits(self, seconds, start, first)
        try:
            self._pipes.write({**message, "id": ident}, deadline)
            while True:
                reply = self._pipes.read(deadline, seconds, why,
                                         lambda: clock.over(self._cpu_end))
                if reply.get("op") == "callback":
                    self._pipes.write(self._lent.serve(reply), deadline)
                elif reply.get("op") == "check":       # a check a cell shows: run it here
                    run_shown(self, reply, message["op"], deadline)
                    self._pipes.write({"op": "checked"}, deadline)
                elif reply.get("id") == ident:
                    return reply
                # anything else (a stale or forged message) is ignored
        except _Broken as broken:
            if broken.why is None:               # the worker ended: say how
                broken.why = _exit_reason(self._process.wait() if self._process else None)
                broken.error = RuntimeError(f"your code stopped the sandbox: {broken.why}")
            self._stop(broken.why)
            raise broken.error from None
        finally:                                     # whichever worker ran them
            used = clock.settled(self.alive) - first
            self._cpu_end = outer
            self.left, self.test_left = self.left - used, self.test_left - used
            self.wall_left -= time.monotonic() - start

    def _stop(self, why: str) -> None:
        """Kill the worker at once (no polite exit: it may be looping or flooding)."""
        self.stopped = why
        if self._process is not None:
            _kill(self._process)
        self.close()


def _request_limits(sandbox: Sandbox, seconds: float, start: float, first: float
                    ) -> tuple[float, float, str]:
    """A request's limits: when its wall-clock backstop is up (``time.monotonic()``), the
    CPU reading (``first`` at its start) at which it stops, and why it would be stopped if
    that is the submission's time (else "")."""
    deadline = min(start + seconds * sandbox.limits.wall_factor, sandbox.deadline,
                   start + sandbox.wall_left)
    end = min(sandbox._cpu_end, first + min(seconds, sandbox.test_left, sandbox.left))
    why = _used_up(sandbox.limits) if deadline == start + sandbox.wall_left or \
        end == first + sandbox.left else ""
    return deadline, end, why


def _by_value(value: Any, generators: list[np.random.Generator]) -> Any:
    """``value``, or the state of a NumPy generator (sent by value, appended to
    ``generators`` to take back the state the call leaves it in)."""
    if isinstance(value, np.random.Generator):
        generators.append(value)
        return GeneratorState.of(value, len(generators) - 1)
    return value


def _take_back(states: Any, generators: list[np.random.Generator]) -> None:
    """Put back on the grader's generators the states a call left them in (as sent in the
    worker's reply), refusing a state the grader cannot take back."""
    for index, state in enumerate(states if isinstance(states, list) else []):
        if index < len(generators):
            try:
                back = decode(state)
                if not isinstance(back, GeneratorState):
                    raise WireError("malformed generator state")
                back.restore(generators[index])
            except (TypeError, ValueError, KeyError) as error:
                raise StudentError("your code left its NumPy generator in a state the "
                                   "grader cannot take back") from error


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the worker's whole session (everything it forked) and reap the worker."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _with_where(error: Exception, reply: dict[str, Any]) -> Exception:
    where = reply.get("where")
    if isinstance(where, str) and len(where) < 100:
        error.where = where                  # type: ignore[attr-defined]
    # Read by dpkit.check._common.raised_in_dpkit: this error's own traceback is the grader's.
    error.raised_in_dpkit = reply.get("in_dpkit") is True  # type: ignore[attr-defined]
    return error


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "it ended"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ \
            else str(-code)
        hints = {"SIGKILL": " (killed: out of memory or CPU time)",
                 "SIGXCPU": " (CPU time limit)", "SIGXFSZ": " (file size limit)",
                 "SIGSEGV": " (crashed)"}
        return f"it was ended by {name}{hints.get(name, '')}"
    return f"it exited with code {code}"


class RemoteFunction:
    """Calls the notebook's function in the sandbox; raises what it raised.

    ``fresh``, if given, is kept as the attribute of that name: ``fresh(count)`` is a
    context manager that gives an iterator of ``count`` stand-ins for the same function in
    new workers, started one after the other, that remember nothing of the calls made here
    (:func:`dpkit.course.judges._base.apart`)."""

    def __init__(self, sandbox: Sandbox, name: str,
                 fresh: Callable[[int], contextlib.AbstractContextManager[
                     Iterator[RemoteFunction]]] | None = None) -> None:
        self._sandbox, self.__name__ = sandbox, name
        if fresh is not None:
            self.fresh = fresh

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._sandbox.call(self.__name__, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<your function {self.__name__}>"


def _reply_error(reply: dict[str, Any], quoted: Callable[[str], bool]) -> Exception:
    """The student's error of ``reply``; unless ``quoted`` (:attr:`Sandbox.quoted`) keeps
    its message, with no message and, for a class of the student's own (whose name the
    code chooses), the type :class:`StudentError`."""
    message = str(reply.get("message", "")) if isinstance(reply, dict) else ""
    if isinstance(reply, dict) and not quoted(message):
        name = str(reply.get("type", ""))
        known = getattr(builtins, name, None)
        builtin = isinstance(known, type) and issubclass(known, Exception)
        reply = {**reply, "message": "", "type": name if builtin else "StudentError"}
        error = _with_where(_student_error(reply), reply)
        error.withheld = True                   # said so in the feedback
        return error
    return _with_where(_student_error(reply), reply)
