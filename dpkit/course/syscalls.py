"""The grading sandbox's system-call filter: a classic-BPF seccomp program, built here.

:class:`dpkit.course.sandbox.Sandbox` hands this program to bubblewrap (``--seccomp FD``),
which installs it in the worker just before the worker's interpreter starts. It refuses,
with ``EPERM``, the system calls of :data:`DENIED`: none is needed by an answer that
computes with NumPy, SciPy or Matplotlib, and each reaches kernel state that outlives a
sandbox or belongs to another process:

* ``add_key``, ``request_key``, ``keyctl``: the kernel's keyrings. A keyring keyed by the
  user (and a session keyring inherited from the grader) outlived one worker and was read
  by the next: a channel between the "fresh" workers the Laplace judge lends one seed to
  (adversarial review 12, F1). The user namespace of each sandbox already gives it its
  own user keyrings; the filter also closes the inherited session keyring;
* ``ptrace``, ``process_vm_readv``, ``process_vm_writev``, ``kcmp``: other processes'
  memory and kernel objects;
* ``perf_event_open``, ``bpf``, ``userfaultfd``, ``syslog``: kernel counters, programs,
  page-fault handling and the kernel's log;
* ``io_uring_setup``, ``io_uring_enter``, ``io_uring_register``: io_uring runs
  operations without system calls, out of this filter's sight.

System-call numbers depend on the architecture, so the program first checks the one the
call was made with (``seccomp_data.arch``): a call of another ABI (a 32-bit call of a
64-bit process, an x32 call on x86-64) is refused whatever its number. Only the
architectures of :data:`ARCHITECTURES` have a filter (:func:`program` returns None
elsewhere, and the sandbox says so in its log line).

Reference: the kernel's ``Documentation/userspace-api/seccomp_filter.rst`` and
``include/uapi/linux/{seccomp,filter,audit}.h``; the numbers are those of
``asm/unistd_64.h`` (x86-64) and ``asm-generic/unistd.h`` (arm64).
"""

from __future__ import annotations

import errno
import os
import platform
import struct

__all__ = ["ARCHITECTURES", "DENIED", "descriptor", "program"]

#: The system calls refused in the sandbox (see the module docstring for why each).
DENIED = ("add_key", "request_key", "keyctl", "ptrace", "process_vm_readv",
          "process_vm_writev", "kcmp", "perf_event_open", "bpf", "userfaultfd", "syslog",
          "io_uring_setup", "io_uring_enter", "io_uring_register")

_X86_64 = {"syslog": 103, "ptrace": 101, "add_key": 248, "request_key": 249, "keyctl": 250,
           "perf_event_open": 298, "process_vm_readv": 310, "process_vm_writev": 311,
           "kcmp": 312, "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425,
           "io_uring_enter": 426, "io_uring_register": 427}
_GENERIC = {"syslog": 116, "ptrace": 117, "add_key": 217, "request_key": 218, "keyctl": 219,
            "perf_event_open": 241, "process_vm_readv": 270, "process_vm_writev": 271,
            "kcmp": 272, "bpf": 280, "userfaultfd": 282, "io_uring_setup": 425,
            "io_uring_enter": 426, "io_uring_register": 427}

#: ``platform.machine()`` → (``AUDIT_ARCH_*`` of its 64-bit ABI, the system-call numbers,
#: the least number that is not of that ABI: x32's ``__X32_SYSCALL_BIT`` on x86-64).
ARCHITECTURES: dict[str, tuple[int, dict[str, int], int]] = {
    "x86_64": (0xC000003E, _X86_64, 0x40000000),
    "aarch64": (0xC00000B7, _GENERIC, 1 << 31),
}

# Classic BPF (include/uapi/linux/filter.h, seccomp.h): a program reads struct seccomp_data
# {int nr; __u32 arch; ...}: the call's number at offset 0, its architecture at 4.
_LOAD_WORD = 0x20            # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15           # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35        # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06               # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000          # SECCOMP_RET_ALLOW
_REFUSE = 0x00050000 | errno.EPERM   # SECCOMP_RET_ERRNO | EPERM


def _instruction(code: int, k: int, true: int = 0, false: int = 0) -> bytes:
    """One ``struct sock_filter``: code, jump offsets if true and if false, constant."""
    return struct.pack("=HBBI", code, true, false, k)


def program(machine: str | None = None) -> bytes | None:
    """The seccomp program that refuses :data:`DENIED` on ``machine``.

    Parameters
    ----------
    machine : str, optional
        ``platform.machine()`` of the machine the worker runs on (by default this one's).

    Returns
    -------
    bytes or None
        The program as bubblewrap's ``--seccomp`` reads it (an array of ``struct
        sock_filter`` in the machine's byte order), or None when ``machine`` is not in
        :data:`ARCHITECTURES`, or this interpreter is not a 64-bit one (its calls would be
        of another ABI than the filter's).

    Examples
    --------
    >>> code = program("x86_64")
    >>> len(code) % 8, len(code) // 8
    (0, 20)
    >>> program("sparc") is None
    True
    """
    machine = platform.machine() if machine is None else machine
    if machine not in ARCHITECTURES or struct.calcsize("P") != 8:
        return None
    arch, numbers, foreign = ARCHITECTURES[machine]
    denied = sorted({numbers[name] for name in DENIED})
    # 0: arch; 1: not ours -> refuse; 2: nr; 3: another ABI's -> refuse; 4..: each denied
    # number -> refuse; then allow; then refuse (the last instruction).
    count = len(denied)
    code = [_instruction(_LOAD_WORD, 4),
            _instruction(_JUMP_EQUAL, arch, 0, count + 3),
            _instruction(_LOAD_WORD, 0),
            _instruction(_JUMP_AT_LEAST, foreign, count + 1, 0)]
    code += [_instruction(_JUMP_EQUAL, number, count - index, 0)
             for index, number in enumerate(denied)]
    code += [_instruction(_RETURN, _ALLOW), _instruction(_RETURN, _REFUSE)]
    return b"".join(code)


def descriptor() -> int | None:
    """A file descriptor holding :func:`program` for bubblewrap's ``--seccomp``.

    Returns
    -------
    int or None
        An anonymous file (``memfd``) positioned at its start, for the caller to pass to
        bubblewrap and close; None where this machine has no filter (:func:`program`).
    """
    code = program()
    if code is None:
        return None
    fd = os.memfd_create("dpkit-sandbox-seccomp", 0)
    os.write(fd, code)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
