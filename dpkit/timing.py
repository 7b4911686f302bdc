"""Releases that take a time set by public parameters: padding to a deadline.

An exact sampler whose cost does not depend on the noise is not enough: Python's exact arithmetic
costs more for a value with a longer binary expansion (``0.1`` against ``0.5``), a larger integer,
or a value that takes another branch, so the running time of a release can reveal the data (Jin,
McMurtry, Rubinstein & Ohrimenko, IEEE S&P 2022, time the noise; an adversary who times a release
on neighbouring inputs can time the data as well). Every public release function of dpkit therefore
ends at a **deadline**: it starts a clock when it is called, does its work, and then waits until

    deadline = start + margin · cost(n)

where ``cost`` is a function's :class:`Cost` (a few constants, in units U of this machine:
:func:`reference`, the time of a fixed workload of exact arithmetic and of one value's share of a
fixed vectorised workload, measured once per process), ``n`` is the public size of the request (the
number of values, outcomes or queries), and ``margin`` is :func:`margin` (default 2). The scalar
constants of the Laplace, Gaussian and randomized-response mechanisms (``fixed``, common noise
scales) and those of :func:`dpkit.svt.choose_clip_bound` and :func:`dpkit.svt.auto_avg` cover at
least the median cost of the slowest adversarial input measured (long binary expansions, large
magnitudes, both sides of every internal switch, noise in the tail), and the default margin its
99.9th percentile (a few thousand calls or fewer; scalars on a quiet core, the other idle, clipping
with the other busy; margins below 2 not validated). The one-value extras of :mod:`dpkit.laplace`
(``LONG_WALK``, ``OFF_PATH``) were checked at the work's 99th percentile only; ``RUN_WORK`` of
:func:`dpkit.svt.above_threshold_runs` was added when runs of one answer, at margin 1, reached their
deadline at the median. The other constants are the worst cost measured when they were set, with no
bound on how often they are overrun. Deadlines are passed mainly in the slow tail of the work, on a
machine much slower than at calibration, by an unlucky draw (the discrete Gaussian's rounds are
unbounded), an input slower than the slowest measured, or other cost ratios (a CPU, Python or MPFR).

Waiting is a busy loop, never a sleep (a sleeper is favoured on waking, so under load a release
that worked less ended earlier), so on an idle core the release ends within about a microsecond of
the deadline plus a random extra wait of up to 2 µs (:func:`_jitter_ns`, from the OS's random
bytes: it blurs the sub-microsecond traces of the work). A release pre-empted during its wait ends
late, uncounted by :func:`overruns`, but not later for having worked less; one pre-empted during
its work (another program on its core) ends later for having worked more (:mod:`dpkit._waiting`).
**Errors.** A release first validates its public inputs (epsilon, delta, sensitivity, the
container's type and shape, the number of values): an error there raises at once, since its time
reveals nothing private. It then declares its public size (:meth:`Deadline.size`), and only then
looks at the values. An error raised after that point (a NaN or a masked entry among the values, a
value too large or too close to the float range, a query answer refused) is **padded to the
deadline before it is raised**, like a release. Validating every value before any other work would
not be enough: validation is itself value-dependent work (``[0.1, nan]`` and ``[2**60 + 1, nan]``
take different times to reach the NaN, since an int beyond ``2**53`` is converted exactly), and so
is the work an SVT does on the answers before the one it refuses (an SVT waits for that step's
deadline: see "Steps" below). Padding makes the time of an error the deadline of its public size,
whatever the other values; the error then reveals only what its message says. The failed work's
locals are cleared before the wait, so freeing them after it costs no data-dependent time; not
those of the caller's code a step called (:meth:`Deadline.call`), freed with the exception in the
caller's time (:func:`dpkit._waiting.clear_work_frames`). An error raised during the wait itself
(a timeout a signal handler raises) is raised when the wait ends, not at once: its time would
show whether the work had ended (review 47, F7); so is one raised while the wait's deadline is
computed, the failed work's frames cleared, or a step's start read (review 48, F1). Not one that a
second signal raises at the exact instruction where the busy loop goes round again, after the
first was caught (CPython checks for signals there; review 48, F2, open: a repeating alarm,
placed by the adversary), nor one raised at the first instruction of ``Deadline.__exit__`` (a
``with padded(...)`` block whose last statement frees temporaries; :func:`run_padded`, which every
release uses, held) or of its ``finally`` as the wait ends, which also leaves the lock held and
the clock active (review 49, F1, F2, open). An error raised during a step's wait gets the step
that unwinds the release, as one the caller's code raises (review 49, F4); a deadline that cannot
be computed raises rather than retrying for ever (F3). Every exception waits (a ``SystemExit`` or a
``GeneratorExit`` too: review 47, F3) but a ``KeyboardInterrupt``, which does not. Simulations
that release nothing (a figure of 10,000 simulated releases, a statistical test) may skip the
waiting inside :func:`unpadded`.

**Steps.** A release that calls the caller's own code (the query functions of :mod:`dpkit.svt`, and
taking each from the caller's stream) runs in steps (:meth:`Deadline.call`): it waits for the
current step's deadline, calls the caller's code, and starts the next step when that returns (or
raises), with its own public budget counted from that moment. No time dpkit measures enters a
deadline: the release takes the time of the caller's code plus the steps' budgets, and the number
of steps is what the caller sees anyway through its own code's calls. (Moving one deadline back by
the measured time of each call would not do: the measured window also holds dpkit's own overhead
around the call, whose duration depends on the cache state its work on the previous answers left.)
An error raised while dpkit processes an answer waits for that step's deadline; an error raised by
the caller's code propagates after one step of size 0 (:attr:`Cost.fixed`, the unwinding; an SVT's
is also charged a public bound on the positives it frees: :func:`dpkit.svt.core.sparse_on_answers`),
so its time reveals only the caller's code.

**Threads.** Releases in one process run one at a time: each takes a process-wide lock before its
clock starts and gives it back after its wait (warm-ups too). Without it, a release in one thread
holds the interpreter lock for its own work, whose length depends on its data, and a release in
another thread that needs that lock meanwhile overruns and shows it: a review certified ε = 0.49
from the timing of one thread's release of public inputs about another thread's neighbouring data.
The garbage collector is off from the clock's start to the end of the wait, the caller's queries
included (a collection would pause a release for a time set by the whole heap; a query's garbage
waits for the release's end); a child that another thread forks meanwhile gets it back on (the
release does not exist there), one that a query forks gets it at the release's end, as the parent
does. A release that found it on empties its young generation (``gc.collect(0)``) before its clock
starts (outside its deadline) and again before its last wait (inside it): the count of young objects
a release leaves (allocations minus deallocations, which decides when the next automatic collection
pauses the caller) was set by the data (review 47, F1); now it is the same whatever the data. A
release that finds the collector off (the caller switched it off) collects nothing, and the count
it leaves differs by a few objects on neighbouring data (review 48, F4, open: a program that
switches it on after a batch of releases starts its first collection an allocation earlier or
later). Each
is a young collection of what the release (before the clock, the caller) left: before the last wait
a median of 0.1–0.8 µs (99th percentile under 2 µs) against last-step deadlines of 160–600 µs
(``randomized_response``, Laplace, Gaussian, ``sparse``; 300 calls each), before the clock 3–4 µs
(10–16 µs) with 0–600 young objects of the caller's; an SVT's last step also collects what its
queries left (their garbage waits for the release's end), so a query that leaves much can make that
step overrun (residual risk 4). A query an SVT release calls runs with the lock held: one that waits
for a release in another thread never returns. A release skips its deadline only inside a ``with
unpadded():`` block that runs on its own call stack, in its thread, when its clock starts (it
decides then, once): a generator suspended inside such a block, a block in another thread, or one
entered in one thread and ended in another, leaves every other release padded (review 45, F1;
:func:`unpadded`); a child created by ``fork`` starts with no block (review 47, F9). Code that runs
on top of any frame (a finalizer, a signal handler) makes its releases inside whatever block that
frame runs in, unpadded then (review 47, F5; :func:`unpadded`).

**Residual risks.** (1) *Overruns.* A release whose work outlasts its deadline (the machine slowed
down by other load after calibration, or a very unlucky draw: CKS Gaussian rounds are unbounded)
ends late, and how late depends on the work, hence on the data; whether it overruns can too (the
slowest input's tail nears the deadline): with its end time counted as output, the release is (ε, (1
+ e^ε)·p)-DP, p the largest overrun probability over all inputs, estimated, not proven, and void
against an adversary who controls the load (Ratliff & Vadhan; the book's Laplace chapter,
"Overruns"). :func:`overruns` counts them without preventing them. (2) *After the deadline.* What
happens after the wait (returning the value, the caller's own work) is not padded. (3) *Side
channels other than time* (cache state, power) are out of scope. (4) *The caller's own code:* a
query function passed to :mod:`dpkit.svt` runs in the caller's time, unpadded (only dpkit's steps
are); how long it takes may depend on the data it reads, and on the cache state dpkit's previous
step left, a few tens of nanoseconds per call, summed over the calls (the jitter of each step, up to
2 µs, blurs it). The answer a query returns is converted inside dpkit's step, so an answer object of
the caller's own numeric type runs its own methods there (and a slow one overruns). Threads of the
caller's own that run Python code while a release runs are other load, as in (1). (5) *First use.*
Work done once, at first use, fell inside the deadline of the release that needed it and overran it
many times over, and an overrunning release ends at a time that depends on its data: the first call
of a function in a process (caches filled, Python's adaptive interpreter specialising the code;
measured at 2–13 times the margin-1 deadline, against at most 1.5 for the fourth call), and the
first release at a new ε, δ or sensitivity (the samplers' tables for the new scale, 0.2–50 ms: every
such release overran). Now the first call of each release function in a process first runs it
``WARM_UP_ROUNDS`` times (:mod:`dpkit._warming`) on fixed public inputs of every kind with the
default source and as many with a seeded one (:func:`warm_up_with`), before its clock starts (a
few tens of ms, once): unpadded but for the last round, which runs the padded path with short
waits (the deadline, the jitter, the busy loop: a warm-up run wholly unpadded left that code cold,
and the first release after it overran in 20 of 20 fresh processes); and a table built during a
release is timed alone and moves the deadline back by its time (:mod:`dpkit._samplers.tables`: a
table depends on a public parameter only). What remains: a code path the warm-up does not take (a
source of the caller's own class, say) can still overrun at its first use, and whether a release
builds a table shows in its time; that depends on the parameters of earlier releases (public),
except for the clipped sum of :func:`dpkit.svt.auto_avg`, whose noise scale follows the bound the
data chose, so a later release at that scale can show whether its table was there. A function made
cold by the machine (caches emptied in a pause, even of 0.1 ms under load; pages copied in a
``fork`` child) overran too. Now its release first re-warms it, outside the clock: fully (1–33 ms)
after 10 ms without a release that returned and in a fork child, lightly (0.3–0.5 ms) after 50 µs
(:mod:`dpkit._warming`: costs, measurements, limits). That pause is the caller's code between two
releases: a caller whose code there takes longer on some data shows it, magnified to a re-warm's
time, in the next release's (review 46, F1, open). A release refused after its size (a NaN among
the values, an answer refused) waits for its deadline but does not count as warmth, so the next
release of its function re-warms, where after a success it would not: the next release's time
shows whether the data were refused (review 48, F3, open).

``benchmarks/timing.py`` audits it: neighbouring inputs, interleaved calls, Clopper–Pearson.

References
----------
A. Haeberlen, B. C. Pierce, A. Narayan. *Differential Privacy Under Fire.* USENIX Security
2011 (queries padded to a fixed time; Fuzz stops a microquery past its time limit and uses a
default value, so the query ends on time; dpkit returns late and counts it).
Z. Ratliff, S. Vadhan. *A Framework for Differential Privacy Against Timing Attacks.*
ACM CCS 2024 (arXiv:2409.05623): timing privacy, and how it composes.
J. Jin, E. McMurtry, B. I. P. Rubinstein, O. Ohrimenko. *Are We There Yet? Timing and
Floating-Point Attacks on Differential Privacy Systems.* IEEE S&P 2022.

Examples
--------
>>> from dpkit.timing import Cost, padded
>>> with padded(Cost(fixed=1.0)) as clock:
...     clock.size(1)             # the public size, once it is known
...     answer = 2 + 2
>>> answer
4
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

from dpkit import _warming
from dpkit._calibration import Reference, measure
from dpkit._checks import check_real
from dpkit._unpadding import inside_unpadded as _inside_unpadded
from dpkit._unpadding import unpadded
from dpkit._waiting import clear_work_frames as _clear_work_frames
from dpkit._waiting import fill_jitter_pool as _fill_jitter_pool
from dpkit._waiting import jitter_ns as _jitter_ns
from dpkit._waiting import wait_until as _wait_until
from dpkit._warming import SMALL_MAX, warm_up_calls, warm_up_with
from dpkit._warming import warm_up_values as _warm_up_values
from dpkit.rng import seeded

__all__ = [
    "KINDS",
    "SMALL_MAX",
    "Cost",
    "Deadline",
    "Reference",
    "kind_of",
    "margin",
    "overruns",
    "padded",
    "public_work_took",
    "reference",
    "run_padded",
    "set_margin",
    "unpadded",
    "warm_up",
    "warm_up_calls",
    "warm_up_with",
]

#: The longest wait of a warm-up's padded round, in ns (the busy loop runs, briefly).
_WARM_UP_WAIT_NS = 20_000


#: How a request holds its values, which sets the per-value part of its deadline: ``"array"`` a
#: float64 NumPy array (a public dtype: ``np.array([x])`` takes it from x, so pass a list then);
#: ``"objects"`` anything else (a scalar, a list, another dtype), whose elements may be floats,
#: huge ints, Fractions or Decimals: the deadline covers the slowest, since the elements' types
#: may depend on the data (``sum`` of ints is an int, of floats a float).
KINDS = ("array", "objects")


@dataclass(frozen=True)
class Cost:
    """The worst cost of one release function, in this machine's reference times.

    ``U = reference().scalar`` (a fixed workload of exact arithmetic) and ``V =
    reference().vector`` (one value's share of a vectorised workload). The deadline of a
    request of ``n`` values is ``margin()`` times::

        fixed·U + per_value·n·U                        n <= 64 (SMALL_MAX)
        fixed·U + large·U + per_vector_value·n·V       n > 64
        + per_object·(n-1)·U    if they come as Python objects (kind "objects"; ``fixed``
                                covers a scalar of any type)

    Attributes
    ----------
    fixed : float >= 0
        The cost of any request, in ``U``.
    per_value : float >= 0
        Each value's cost in a request of up to 64 values, in ``U``.
    large : float >= 0
        The extra cost of a request of more than 64 values (the vectorised samplers'
        set-up), in ``U``.
    per_vector_value : float >= 0
        Each value's cost in a request of more than 64 values, in ``V``.
    per_object : float >= 0
        Each value's extra cost, in ``U``, when the values come as Python objects (see
        :data:`KINDS`): the cost of the slowest element type (a Decimal).
    """

    fixed: float
    per_value: float = 0.0
    large: float = 0.0
    per_vector_value: float = 0.0
    per_object: float = 0.0

    def seconds(self, size: int, objects: int = 0) -> float:
        """The deadline, in seconds (margin included), of a request of ``size`` values of
        which ``objects`` come as Python objects."""
        ref = reference()
        if size <= SMALL_MAX:
            work = (self.fixed + self.per_value * size) * ref.scalar
        else:
            work = (self.fixed + self.large) * ref.scalar + \
                self.per_vector_value * size * ref.vector
        work += self.per_object * max(0, objects - 1) * ref.scalar  # fixed covers one
        return _state.margin * work


class _State:
    """The process's reference, margin and overrun count (one lock for all three), the lock
    that lets one release run at a time, whether a release switched the collector off, and
    each thread's running deadlines and warm-up (the :func:`unpadded` blocks are
    :mod:`dpkit._unpadding`'s)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        # One release (or warm-up) at a time in the process, from before its clock starts
        # to the end of its wait; reentrant, for a release made inside a release.
        self.releases = threading.RLock()
        self.local = threading.local()
        self.reference: Reference | None = None
        self.margin = 2.0
        self.overruns = 0
        # Whether the collector is off because a running release switched it off (it was on
        # before): a fork child with none of that release's frames switches it on again.
        self.collector_off = False


_state = _State()


def reference() -> Reference:
    """This machine's reference times, measured at the first call (a few ms) and kept.

    The workloads are fixed (no data), so the deadlines computed from them depend on
    public quantities only. The fastest of several runs is kept, so a busy moment at
    calibration lengthens the deadlines little; a machine slowed down later by other load
    may overrun them (:func:`overruns`).

    Returns
    -------
    Reference
    """
    if _state.reference is None:
        measured = measure()
        with _state.lock:
            if _state.reference is None:
                _state.reference = measured
    return _state.reference


def warm_up() -> None:
    """Run now every warm-up not yet run (:func:`warm_up_with`), for the release functions
    imported so far: a program can pay that once-per-process cost at start-up rather than
    at each function's first call.

    **Guarantee.** As :func:`warm_up_with`: once it has run, the first release of each of
    those functions does no first-use work of the paths warmed inside its deadline. Each
    warm-up runs once per process (a second call runs nothing), holding the release lock,
    so no other thread's release starts its clock meanwhile.

    Returns
    -------
    None

    Raises
    ------
    Exception
        An error other than ``ValueError`` or ``TypeError`` raised by a warm-up's
        ``release`` (those two are the refusal path being warmed, and are dropped).

    Examples
    --------
    >>> from dpkit.timing import Cost, run_padded, warm_up, warm_up_with
    >>> def work(clock, value):
    ...     clock.size(1)
    ...     return value
    >>> runs = []
    >>> warm_up_with(work, lambda value, rng: runs.append(run_padded(Cost(0.0), work, value)))
    >>> warm_up()                  # at start-up: every release imported so far, this one too
    >>> count = len(runs)
    >>> count > 0
    True
    >>> warm_up(); run_padded(Cost(fixed=0.0), work, 1); len(runs) < 2 * count  # ran once
    1
    True
    """
    for work in list(_warming.pending):
        _warm_up(work)


def _warm_up(work: Callable[..., Any]) -> None:
    """Run the warm-ups of ``work`` if not yet run in this process (:func:`warm_up_with`),
    holding the release lock: no other thread's release runs (or starts cold) meanwhile."""
    with _state.releases:
        releases = _warming.start_warm_up(work)
        if releases is None:
            return                         # run by another thread while this one waited
        try:
            with unpadded():
                _rounds(releases, _warming.WARM_UP_ROUNDS - _warming.PADDED_WARM_UP_ROUNDS)
            with _short_padded_waits(work):
                _rounds(releases, _warming.PADDED_WARM_UP_ROUNDS)
            _warming.registered[work] = releases
        finally:
            _warming.end_warm_up(work)


def _rounds(releases: list[Callable[[Any, Any], object]], rounds: int) -> None:
    """The warm-up releases on every warm-up value, ``rounds`` times with each source."""
    _warming.call_releases(releases, _warm_up_values(), [None, seeded(0)], rounds)


def _rewarm(work: Callable[..., Any], source: Any) -> None:
    """Re-warm ``work``, gone cold (:func:`dpkit._warming.cold`), before its clock starts,
    holding the release lock, with ``source`` (:func:`dpkit._warming.rewarm_source`): its
    warm-up releases once on every warm-up value, unpadded (a full re-warm only), then on
    the first value padded (short waits)."""
    with _state.releases:
        level = _warming.cold(work)   # not re-warmed by another thread while this one waited
        if level:
            releases, values = _warming.registered[work], _warm_up_values()
            if level == "full":
                with unpadded():
                    _warming.call_releases(releases, values, [source], 1)
            with _short_padded_waits(work):
                _warming.call_releases(releases, values[:1], [source], 1)
            _warming.released(work)


@contextlib.contextmanager
def _short_padded_waits(work: Callable[..., Any]) -> Iterator[None]:
    """Run this thread's releases of ``work`` (:func:`run_padded`'s) through the padded path,
    even inside :func:`unpadded`, each wait ending at most :data:`_WARM_UP_WAIT_NS` after the
    work, and leave :func:`overruns` as it was: a warm-up's padded rounds warm the wait itself
    (the deadline, the jitter, the busy loop), and their overruns are the cold start it pays.
    A release of another work function meanwhile (a signal handler's) waits in full (review
    47, F5). Called with the release lock held: no other thread counts an overrun meanwhile."""
    local = _state.local
    warming, count = getattr(local, "warming", None), _state.overruns
    local.warming = work
    try:
        yield
    finally:
        local.warming = warming
        with _state.lock:
            _state.overruns = count


def margin() -> float:
    """Every deadline's factor over its allowance (its :class:`Cost` and added work), default 2."""
    return _state.margin


def set_margin(factor: float) -> None:
    """Set the factor by which every deadline exceeds its allowance (the module notes): at the
    default 2, up to about one release in a thousand of the slowest input of one value (and of
    the clipping functions) may overrun on a quiet core, with no bound for other requests (the
    notes, risk (1)); below 2 is not validated; larger is slower, with fewer overruns (unmeasured).

    Parameters
    ----------
    factor : real number in [1, 1000]

    Raises
    ------
    TypeError, ValueError
        If ``factor`` is not a real number in [1, 1000].
    """
    factor = check_real(factor, "margin")
    if not 1 <= factor <= 1000:
        raise ValueError(f"the timing margin must be in [1, 1000], got margin={factor!r}")
    _state.margin = float(factor)


def overruns() -> int:
    """How many deadlines in this process were passed before the wait: releases that ended
    late, and steps of a release in steps (:meth:`Deadline.call`) that did: it reports
    overruns, it does not prevent them (see the module notes)."""
    return _state.overruns


def kind_of(value: Any) -> str:
    """How ``value`` holds its numbers (one of :data:`KINDS`): ``"array"`` for a float64
    NumPy array, ``"objects"`` for anything else. Looks at the container only."""
    return "array" if isinstance(value, np.ndarray) and value.dtype == np.float64 else "objects"


def _after_fork_in_child() -> None:
    """In a child created by ``fork``: replace the locks (a parent thread may have held
    them; :mod:`dpkit._warming` puts back the warm-ups a parent thread was running, and
    :mod:`dpkit._waiting` drops the jitter pool), but keep the release lock if the forking
    thread holds it (its release, whose caller's code forked, goes on in the child and gives
    it back at its end; another thread of the child waits for it meanwhile: review 47, F6),
    and switch the collector on again if a release of another thread switched it off (that
    release does not exist in the child; one of the forking thread's own goes on and switches
    it on at its end: review 45, F2). (:mod:`dpkit._unpadding` forgets every block: review
    47, F9.)"""
    _state.lock = threading.Lock()
    if not _state.releases._is_owned():
        _state.releases = threading.RLock()
    if _state.collector_off and not _active():
        _state.collector_off = False
        gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Deadline:
    """A release's clock, started by :func:`padded` and waited out when the release ends:
    call :meth:`size` once the public size is known (see :func:`padded`). ``work`` is the
    work function :func:`run_padded` runs (a warm-up's padded rounds shorten the waits of its
    releases only)."""

    def __init__(self, cost: Cost, work: Callable[..., Any] | None = None) -> None:
        self._cost = cost
        self._work = work
        self._counts = {kind: 0 for kind in KINDS}
        self._start = 0
        self._past = 0.0   # the budgets of the steps before this one (see call)
        self._extra = 0.0  # public work added to this step (add_work), in U
        self._sized = False
        self._collector = False  # whether this release switched the collector off

    def size(self, size: int, kind: str = "array") -> None:
        """Declare the request's public size (values, outcomes, queries) and how its values
        come (:func:`kind_of`). Call it once the public inputs are validated and before any
        value is looked at: from then on an error waits for the deadline before it is
        raised (see "Errors" in :mod:`dpkit.timing`)."""
        self._counts = {name: 0 for name in KINDS}
        self._counts[kind] = size
        self._sized = True

    def add(self, kind: str = "objects", count: int = 1) -> None:
        """Add ``count`` values of ``kind``: one more query answer, one more run started (a
        count that the release's output reveals anyway, such as the queries an SVT read)."""
        self._counts[kind] += count

    def add_work(self, units: float) -> None:
        """Add ``units`` (in ``U = reference().scalar``, times the margin) to this step's
        deadline: work whose size public parameters set beyond what the :class:`Cost` covers
        (a far scale's draw). ``units`` is a number >= 0 that a float64 holds exactly, else
        ``ValueError`` (``TypeError`` for what is not a real number, such as a bool)."""
        if check_real(units, "units") < 0:
            raise ValueError(f"units must be a finite number >= 0, got units={units!r}")
        self._extra += float(units)

    def seconds(self) -> float:
        """The current step's deadline, in seconds after its start (the release's start,
        or the return of the caller's code: see :meth:`call`)."""
        counts = self._counts
        return self._cost.seconds(sum(counts.values()), counts["objects"]) + \
            _state.margin * self._extra * reference().scalar

    def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Return ``function(*args)``: the caller's own code (a query function), run between
        two steps of a release.

        Waits for the current step's deadline (its start plus :meth:`seconds`), calls ``function``,
        and starts the next step when it returns or raises, with no values charged yet (:meth:`add`
        charges them). No measured time enters a deadline: each step ends a public budget after the
        caller's code returned, so the release takes the time of the caller's code plus the steps'
        budgets (see "Steps" in :mod:`dpkit.timing`).
        """
        try:
            self._wait()   # an error raised in it gets the unwinding step too (review 49, F4)
            return function(*args)
        finally:
            # first: an error a signal handler raises below still waits from this step's
            # start, not the one before the caller's code (review 48, F1)
            self._start = time.perf_counter_ns()
            if gc.isenabled():             # the caller's code switched it on
                self._collector = _state.collector_off = True
                gc.disable()
            _fill_jitter_pool()
            self._start = time.perf_counter_ns()
            self._past += self.seconds()
            self._counts = {kind: 0 for kind in KINDS}
            self._extra = 0.0

    def budget(self) -> float:
        """The release's deadlines in seconds: its steps' :meth:`seconds`, summed."""
        return self._past + self.seconds()

    def _wait(self) -> None:
        """Wait for the current step's deadline (unless unpadded); count an overrun. An error
        raised during the wait (a signal handler's timeout) is raised once the deadline is
        reached, as one raised during the work (review 47, F7); an interrupt, at once."""
        if not self._padded:
            return
        error: BaseException | None = None
        deadline = None
        while True:
            try:   # the deadline computed inside too: an error there waits (review 48, F1)
                if deadline is None:
                    deadline = self._deadline()
                late = _wait_until(deadline)
                break
            except KeyboardInterrupt:
                raise
            except BaseException as caught:   # the first one is raised, at the deadline
                if deadline is None and error is not None:
                    raise   # its deadline cannot be computed (twice): no spin (review 49, F3)
                error = error or caught
        if error is not None:
            raise error
        if late:
            with _state.lock:
                _state.overruns += 1

    def _deadline(self) -> int:
        """When the current step's wait ends (``perf_counter_ns``): its start, its budget,
        the jitter; a warm-up's padded round waits briefly."""
        deadline = self._start + int(self.seconds() * 1e9) + _jitter_ns()
        if self._warm_round:                  # a warm-up's padded round: short waits
            deadline = min(deadline, time.perf_counter_ns() + _WARM_UP_WAIT_NS)
        return deadline

    def __enter__(self) -> Deadline:
        self._lock = _state.releases
        # One release at a time (see "Threads"). An interrupt handled as ``acquire`` returns,
        # before the ``try``, leaves the lock taken: CPython's ``with`` race, which no
        # pure-Python code closes (breaker review 47, F2).
        self._lock.acquire()
        try:
            self._collector = gc.isenabled()  # off until the wait ends (see "Threads")
            if self._collector:
                _state.collector_off = True   # first: a fork in between finds it on anyway
                gc.disable()
            # once, at the start (review 44, F5); a warm-up's padded round pads the releases
            # of the work it warms (of it only: review 47, F5) whatever blocks surround it
            self._warm_round = self._work is not None and \
                getattr(_state.local, "warming", None) is self._work
            self._padded = self._warm_round or not _inside_unpadded()
            if self._collector and self._padded:
                gc.collect(0)  # the caller's young objects: not inside the deadline (F1)
            _active().append(self)
            reference()  # calibrate outside the timed interval
            _fill_jitter_pool()  # read the OS outside it too
            self._start = time.perf_counter_ns()  # inside: an interrupt here (review 47, F2)
        except BaseException:          # an interrupt, say: leave nothing behind (review 45, F3)
            with contextlib.suppress(ValueError):
                _active().remove(self)
            self._give_back()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            self._end(kind, trace)
        finally:   # active until after the wait: no re-warm runs inside it (review 48, F5)
            with contextlib.suppress(ValueError):
                _active().remove(self)
            self._give_back()

    def _give_back(self) -> None:
        """Switch the collector on again if this release switched it off, and give the
        release lock back."""
        try:
            if self._collector:
                gc.enable()
                _state.collector_off = False
        finally:
            self._lock.release()

    def _end(self, kind: type[BaseException] | None, trace: TracebackType | None) -> None:
        """Wait for the deadline, unless unpadded or the public inputs were refused; first
        empty the young generation if this release switched the collector off (review 47, F1:
        the count it leaves is then the same whatever the data)."""
        if not self._padded:
            return
        if kind is not None and (not self._sized or issubclass(kind, KeyboardInterrupt)):
            return  # public inputs refused, or an interrupt: no wait (review 47, F3)
        try:
            if kind is not None:   # before the wait, inside the try (review 48, F1)
                _clear_work_frames(trace, Deadline.call.__code__)
            if self._collector:
                gc.collect(0)      # finalizers, callbacks: any code, inside the deadline
        finally:                   # an error it raises (a signal handler's) waits too (F7)
            self._wait()


def _active() -> list[Deadline]:
    """This thread's deadlines now running (innermost last)."""
    local = _state.local
    if not hasattr(local, "active"):
        local.active = []
    return local.active


def public_work_took(nanoseconds: int) -> None:
    """Move this thread's running deadlines back by ``nanoseconds``: the time just taken by
    work that depends on public parameters only, done once (a sampler's table for a new
    scale, :mod:`dpkit._samplers.tables`), so that it cannot make a release overrun.

    Only such work may be reported: the time measured is added to the release's, so it
    must not depend on the data or the noise.

    **Guarantee.** The deadlines of the releases running on this thread (a release inside
    a release moves both) end ``nanoseconds`` later; those of other threads, and a release
    started afterwards, are untouched. Outside any release it does nothing.

    Parameters
    ----------
    nanoseconds : int
        The time the public work took, measured around that work alone
        (:func:`time.perf_counter_ns`).

    Returns
    -------
    None

    Examples
    --------
    >>> import time
    >>> from dpkit.timing import Cost, padded, public_work_took
    >>> with padded(Cost(fixed=0.0)) as clock:
    ...     clock.size(1)
    ...     start = time.perf_counter_ns()
    ...     table = [2**k for k in range(64)]      # set by a public parameter only
    ...     public_work_took(time.perf_counter_ns() - start)
    ...     answer = table[10]
    >>> answer
    1024
    >>> public_work_took(1_000)   # outside any release: no deadline to move
    """
    for clock in _active():
        clock._start += nanoseconds


def run_padded(cost: Cost, work: Callable[..., Any], *args: Any) -> Any:
    """Return ``work(clock, *args)``, padded to the deadline of ``cost``.

    The way every release function runs: ``work`` validates the public inputs, declares
    the public size (``clock.size``), then does the release's work and returns only its
    output (an error after ``clock.size`` is padded too: see "Errors" above), so the
    temporaries it made (arrays of Python ints or Fractions, say) are freed when it
    returns, *before* the wait (freed after it, they would take a data-dependent time).
    Before the clock starts, ``work``'s warm-up runs if it has not, or a short re-warm if
    ``work`` has gone cold (:mod:`dpkit._warming`); never inside another release.

    Parameters
    ----------
    cost : Cost
        The release function's worst cost.
    work : callable
        ``work(clock, *args)``: the release; it declares the public size with
        ``clock.size(...)``.
    *args
        Passed to ``work``.

    Returns
    -------
    Whatever ``work`` returns.
    """
    if work in _warming.pending:
        _warm_up(work)
    elif _warming.cold(work) and not (_active() or getattr(_state.local, "warming", None)
                                      or _inside_unpadded()):
        _rewarm(work, _warming.rewarm_source(args))   # never inside a deadline or a warm-up
    with Deadline(cost, work) as clock:
        result = work(clock, *args)
    _warming.released(work)      # a refusal, before or after the clock, is no warmth (brk8)
    return result


def padded(cost: Cost) -> Deadline:
    """Pad a release to its deadline: ``with padded(cost) as clock: ...``.

    The clock starts when the context is entered. Inside, call ``clock.size(n)`` once the
    public size ``n`` is known; on a normal exit the context waits until
    ``cost.seconds(n)`` after the start (a release of size 0 if no size was declared). On
    an exception raised after ``clock.size`` (but a ``KeyboardInterrupt``) it waits too, then
    lets the exception through;
    before it (public inputs refused) it does not wait (see "Errors" in the module notes).

    Parameters
    ----------
    cost : Cost
        The function's worst cost.

    Returns
    -------
    Deadline
        A context manager.
    """
    return Deadline(cost)
