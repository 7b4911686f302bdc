"""Which releases skip their deadline: the ``with unpadded():`` blocks of :mod:`dpkit.timing`
(:func:`unpadded`, re-exported there) and the stack walk that finds whether a release runs
inside one (:func:`inside_unpadded`, called before its clock starts).

Private: :mod:`dpkit.timing` is the interface.
"""

from __future__ import annotations

import contextlib
import os
import sys
from types import FrameType

__all__ = ["blocks", "inside_unpadded", "unpadded"]

#: Every ``with unpadded():`` block running or suspended, in any thread -> the frame that runs
#: its ``with`` statement. No lock: each use is one dict operation, atomic under the interpreter
#: lock (the keys hash by identity: no Python code runs inside), and a block's exit may run
#: inside a collection anywhere (a suspended generator freed), even where a lock is held: a
#: lock it took deadlocked such a collection in the stack walk (breaker review 47, F4).
blocks: dict[_Block, FrameType] = {}


def unpadded() -> contextlib.AbstractContextManager[None]:
    """Run simulations, not releases, without waiting for deadlines: ``with unpadded(): ...``.

    For code that releases nothing anyone can time: a figure drawn from thousands of
    simulated releases, a statistical test of a sampler. **Never** wrap a real release in
    it: inside, a release's running time reveals what the deadline hides (see
    :mod:`dpkit.timing`). Nested uses are allowed.

    **Which releases.** A release skips its deadline only if a ``with unpadded():`` block is
    running on its own call stack when its clock starts (it decides then, once): the frame whose
    ``with`` statement entered the block (recorded on entry) is the release's caller or one of
    its callers, in the thread making the release. The release walks its stack for it before its
    clock starts, only while a block exists in some thread (about 3 µs for 30 frames on a busy
    core; 0.1 µs without a block). So a block covers what its body calls and nothing else: not
    another thread, and not what runs while the block is suspended at a ``yield`` (a generator's
    frame is on no stack then): a stream of queries picked by simulations inside the block
    leaves the caller's releases padded, and those its queries make; a block entered in one
    thread and ended in another covers neither thread meanwhile (review 45, F1). Hence a block
    that a ``contextlib.contextmanager`` function (or a pytest fixture) holds across its
    ``yield``, or that ``ExitStack.enter_context`` enters, covers nothing: write the ``with``
    statement around the simulation itself. A process created by ``fork`` starts with no block,
    even one forked inside a block (a ``multiprocessing`` pool made there, whose workers would
    otherwise make every release unpadded for life: review 47, F9): a worker process that runs
    simulations needs its own ``with unpadded():`` around them, in the function it runs.

    **Code that runs on top of any frame.** A finalizer (``__del__``, ``weakref.finalize``, a
    collection's), a signal handler, a trace or profile function and a ``gc.callbacks`` entry
    run on top of whatever frame the thread executes: inside a block, a real release they make
    is unpadded too (review 47, F5), and so is one made during the unpadded rounds of a
    warm-up or re-warm (which run inside a block; its padded rounds shorten the waits of the
    function warmed only). Make no release from such code, or make sure no block runs then.
    A debugger's ``jump`` out of a block (pdb's, setting ``frame.f_lineno``) skips its exit:
    the block stays registered, and the rest of that frame's releases are unpadded (review
    47, F8).

    Returns
    -------
    contextlib.AbstractContextManager
        For a ``with`` statement (``as`` gives None).

    Examples
    --------
    >>> from dpkit.laplace import laplace_mechanism
    >>> from dpkit.rng import seeded
    >>> with unpadded():
    ...     draws = [laplace_mechanism(0.0, 1.0, 1.0, rng=seeded(i)) for i in range(100)]
    >>> len(draws)
    100
    """
    return _Block()


class _Block:
    """A ``with unpadded():`` block: registers the frame that runs the ``with`` statement
    while the block runs (:func:`inside_unpadded` looks for it on the stack)."""

    def __enter__(self) -> None:
        blocks[self] = sys._getframe(1)   # the frame whose ``with`` statement this is

    def __exit__(self, *exc_info: object) -> None:
        blocks.pop(self, None)            # in whatever thread the block ends


def inside_unpadded() -> bool:
    """Whether a ``with unpadded():`` block is running on this thread's current call stack
    (its frame is the caller's or an ancestor's). Walks the stack: call it before a clock
    starts (its time depends on the stack's depth and the blocks of all threads, never on
    data)."""
    if not blocks:
        return False
    # A copy, in one C call (no Python code runs inside it); a collection its allocation
    # starts may end a block (its exit takes no lock: review 47, F4).
    frames = set(blocks.copy().values())
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame in frames:
            return True
        frame = frame.f_back
    return False


def _forget() -> None:
    """In a child created by ``fork``: forget every block, so the child's releases are padded
    until it enters a block of its own (review 47, F9)."""
    blocks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
