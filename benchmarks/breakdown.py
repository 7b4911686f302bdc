"""Where one exact vector release spends its time, stage by stage, beside NumPy's samplers.

For ``laplace_mechanism`` and ``gaussian_mechanism`` on vectors of ``10**5`` and ``10**6``
values (ε = 0.5, δ = 1e-6, sensitivity 1, the secure default source, as in
``benchmarks/noise.py``), this runs the real release under a small tracer
(:class:`StageTracer`, :func:`sys.settrace`) that charges every nanosecond of the work to
one stage, by the function and the statement running:

* *validate, parameters*: the release's own checks, calibration and range check;
* *random bytes (ChaCha20)*: :meth:`dpkit.rng.SecureRandom.bytes`, wherever called in the
  first pass;
* the first pass of the block-envelope sampler (``Envelope._fill`` on every position):
  *proposal fields* (splitting the bytes into guide bits, sign, offset and acceptance bits),
  *guide lookup*, *guide refinement* (the second-level tables, for the proposals the guide
  leaves undecided), *values* (``x* + offset``, the tail check), *acceptance, first bits*
  (integer thresholds), *acceptance, undecided* (more bits, float Taylor brackets),
  *sign*;
* *rejection rounds*: every later pass over the rejected positions, all stages together;
* *grid rounding, add, to float*: rounding the values to the grid, adding the noise and
  converting back (:func:`dpkit._samplers.grid.add_to_floats`);
* *padding*: the rest of the padded release, which lasts until its deadline.

Times are CPU times of this thread (:func:`time.thread_time_ns`, best of :data:`REPEATS`),
so that other jobs on a shared machine distort them less, except the padding: a padded
release lasts its deadline (``margin() · cost.seconds(n)``, set by public quantities, see
:mod:`dpkit.timing`) or its work if that is longer, whatever CPU it uses while it waits
(mostly asleep: its CPU time, which ``benchmarks/noise.py`` reports for the padded rows,
leaves the sleep out). The padded release's measured wall time is printed beside it.
The tracer's own cost inflates the traced times by a roughly fixed cost per trace event
(a Python call, a line, a return; an event that switches stages is charged half to the
stage before it and half to the stage after; with tracing on, CPython 3.11 also runs all
bytecode unspecialised, a cost that grows with the Python work, as the events do). The
events are counted per stage; traced and untraced (:func:`dpkit.timing.unpadded`) runs
alternate, and the cost per event is the best traced run's excess over the best untraced
run, divided by the events: each stage is reported as its time in the best traced run
less its events' cost, so the stages add up to the untraced work. Each
stage's time is also given in *passes*: its time over that of one NumPy pass over the
vector (``np.add(x, y, out=z)`` on float64). Below the table: NumPy's ``laplace`` /
``normal`` on the same vector (plus the addition, as ``benchmarks/noise.py`` times them)
as speed ratios, the deadline per value, the ChaCha20 bytes alone (one call for as many
bytes as the release read), bits read per value, the rejection rate, the share of
proposals refined and checked against thresholds, and the number of sampler passes.
Ratios are within one process; the load average is printed, since nothing measured on a
shared machine is quiet.

Run: ``.venv/bin/python benchmarks/breakdown.py`` (about half a minute at load 8).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import os
import sys
import textwrap
import time
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

import numpy as np

from dpkit import gaussian, laplace
from dpkit._samplers import envelope, grid, noise
from dpkit.rng import SecureRandom, default
from dpkit.timing import Cost, margin, reference, unpadded

SIZES = (100_000, 1_000_000)
#: CPU time of this thread: other jobs on a shared machine do not distort it (a pre-empted
#: stage is not charged for the time it waited).
_clock = time.thread_time_ns
REPEATS = 5
EPSILON, DELTA, SENSITIVITY = 0.5, 1e-6, 1.0

VALIDATE = "validate, parameters"
BYTES = "random bytes (ChaCha20)"
FIELDS = "proposal fields (split bits)"
GUIDE = "guide lookup"
REFINE = "guide refinement (2nd level)"
VALUES = "values: x* + offset, tail"
ACCEPT_FIRST = "acceptance, first bits"
ACCEPT_MORE = "acceptance, undecided"
SIGN = "sign"
ROUNDS = "rejection rounds (all stages)"
ADD = "grid rounding, add, to float"
PADDING = "padding to the deadline"
#: The rows, in the order printed; the traced stages are all but the last.
STAGES = (VALIDATE, BYTES, FIELDS, GUIDE, REFINE, VALUES, ACCEPT_FIRST, ACCEPT_MORE, SIGN,
          ROUNDS, ADD, PADDING)


def _fill_stage(text: str) -> str:
    """The stage of one statement of ``Envelope._fill``, from its source text."""
    for marker, stage in (("read_fields", FIELDS), ("refine", REFINE), ("table.guide", GUIDE),
                          ("entry < 0", GUIDE), ("accept", ACCEPT_FIRST), ("flip", SIGN)):
        if marker in text:
            return stage
    return VALUES


def _statement_stages(function: Callable[..., Any],
                      stage_of: Callable[[str], str]) -> dict[int, str]:
    """``{line: stage_of(text)}`` for every line of ``function``'s statements, called in
    source order; a compound statement's header is classified by its header's text, its
    body statement by statement."""
    source = textwrap.dedent(inspect.getsource(function))
    first = function.__code__.co_firstlineno - 1
    lines = source.splitlines()
    body = ast.parse(source).body[0].body  # type: ignore[attr-defined]
    statements = sorted((node for top in body for node in ast.walk(top)
                         if isinstance(node, ast.stmt)), key=lambda node: node.lineno)
    stages: dict[int, str] = {}
    for node in statements:
        inner = [child.lineno for field in ("body", "orelse") for child in
                 getattr(node, field, []) if isinstance(child, ast.stmt)]
        end = min(inner) - 1 if inner else node.end_lineno or node.lineno
        stage = stage_of("\n".join(lines[node.lineno - 1:end]))
        for line in range(node.lineno, end + 1):
            stages[first + line] = stage
    return stages


def _accept_stages() -> Callable[[str], str]:
    """Stages of ``_Acceptance.accept``'s statements, in source order: from the float ``γ``
    on (computed for the proposals the first bits left undecided), :data:`ACCEPT_MORE`."""
    undecided = False

    def stage(text: str) -> str:
        nonlocal undecided
        undecided = undecided or ".gamma(" in text
        return ACCEPT_MORE if undecided else ACCEPT_FIRST
    return stage


def _sample_stage(text: str) -> str:
    """Statements of ``Envelope.sample`` after the first pass: :data:`ROUNDS`."""
    later = "again" in text or ("rejected" in text and "_fill(out" not in text)
    return ROUNDS if later else VALUES


@dataclasses.dataclass
class _Rule:
    """How the tracer treats the frames of one code object."""

    stage: str                                   # the frame's stage (or its lines' default)
    lines: dict[int, str] | None = None          # per-line stages, if any
    counts: tuple[tuple[str | None, str], ...] = ()  # at the return: (local, counter); a
    #                                              local's size (or value) is added, None adds 1
    root: bool = False                           # the release's work: starts the clock


class StageTracer:
    """Charge the CPU time of one release's work to stages (see the module docstring).

    Frames of code objects with a :class:`_Rule` push their stage (or their current
    line's); frames of other code are not traced and run under their caller's stage. Inside
    a frame whose stage is :data:`ROUNDS`, every stage is :data:`ROUNDS`. The time between
    two trace events goes to the stage running before the second, so the stages' times add
    up exactly to the time from the work's call to its return (:attr:`whole`).
    """

    def __init__(self, work: CodeType, target: object) -> None:
        fill, accept = envelope.Envelope._fill, envelope._Acceptance.accept
        sample = envelope.Envelope.sample
        self.rules = {
            work: _Rule(VALIDATE, root=True),
            sample.__code__: _Rule(VALUES, _statement_stages(sample, _sample_stage),
                                   (("out", "values"),)),
            fill.__code__: _Rule(VALUES, _statement_stages(fill, _fill_stage),
                                 (("out", "proposals"), (None, "fills"))),
            envelope._EntryTable.refine.__code__: _Rule(REFINE, counts=(("result", "refined"),)),
            accept.__code__: _Rule(ACCEPT_FIRST, _statement_stages(accept, _accept_stages()),
                                   (("slow", "checked"),)),
            envelope._Layout.gamma.__code__: _Rule(ACCEPT_MORE,
                                                   counts=(("offset", "undecided"),)),
            grid.add_to_floats.__code__: _Rule(ADD),
            SecureRandom.bytes.__code__: _Rule(BYTES, counts=(("n", "bytes"),)),
        }
        self.target = target
        self.times = dict.fromkeys(STAGES[:-1], 0)
        self.counts = dict.fromkeys(("bytes", "proposals", "fills", "values", "refined",
                                     "checked", "undecided"), 0)
        self.events = dict.fromkeys(STAGES[:-1], 0.0)
        self.whole = 0
        self._stack: list[str] = []
        self._last = 0

    def _credit(self) -> None:
        """Charge the time since the last event to the running stage, which pays about half
        of this event's handling (the stage running next, counted by :meth:`_next`, the
        rest)."""
        now = _clock()
        stage = self._stack[-1]
        self.times[stage] += now - self._last
        self.events[stage] += 0.5
        self._last = now

    def _next(self) -> None:
        self.events[self._stack[-1]] += 0.5

    def _on_call(self, frame: FrameType, event: str, arg: Any) -> Any:
        rule = self.rules.get(frame.f_code)
        if rule is None or (rule.root and frame.f_locals.get("value") is not self.target):
            if self._stack:                    # a call inside the work: its handling costs
                self.events[self._stack[-1]] += 1
            return None
        if not self._stack:
            if not rule.root:
                return None
            self._last = _clock()
        else:
            self._credit()
        start = self._last
        inherited = bool(self._stack) and self._stack[-1] == ROUNDS
        self._stack.append(ROUNDS if inherited else rule.stage)
        self._next()
        lines = None if inherited else rule.lines
        frame.f_trace_lines = lines is not None

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line" and lines is not None:
                stage = lines.get(frame.f_lineno, rule.stage)
                if stage != self._stack[-1]:
                    self._credit()
                    self._stack[-1] = stage
                    self._next()
                else:
                    self.events[stage] += 1
            elif event == "return":
                for name, key in rule.counts:
                    item = 1 if name is None else frame.f_locals[name]
                    self.counts[key] += int(getattr(item, "size", item))
                self._credit()
                self._stack.pop()
                if rule.root:
                    self.whole += self._last - start
                else:
                    self._next()
            return local
        return local

    def run(self, release: Callable[[], object]) -> None:
        """Run ``release`` (unpadded) with the tracer on."""
        previous = sys.gettrace()
        with unpadded():
            sys.settrace(self._on_call)
            try:
                release()
            finally:
                sys.settrace(previous)


def best_ns(fn: Callable[[], object], repeats: int = REPEATS,
            clock: Callable[[], int] = _clock) -> int:
    """The shortest time (CPU time of this thread by default) of ``repeats`` back-to-back
    calls, in nanoseconds."""
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


@dataclasses.dataclass
class Breakdown:
    """One release's stages (µs, summing to ``release_us``) and what was counted."""

    mechanism: str
    n: int
    stages: dict[str, float]       # µs per stage, padding included
    release_us: float              # the padded release: its deadline, or its work if longer
    work_us: float                 # the work alone, untraced (CPU time)
    traced_us: float               # the work under the tracer (CPU time, the best run)
    events: float                  # trace events per traced release
    per_event_ns: float            # the tracer's estimated cost per event
    wall_us: float                 # the padded release's wall time, as measured
    numpy_us: float                # NumPy's float noise plus the addition
    pass_us: float                 # one NumPy pass over the vector
    bytes_us: float                # the ChaCha20 bytes alone, one call
    counts: dict[str, int]         # in the traced run whose stages are shown


def _release(mechanism: str, value: np.ndarray) -> tuple[Callable[[], object],
                                                          Callable[[], object], CodeType, Cost]:
    """The secure release, NumPy's float equivalent, the work function's code, its cost."""
    generator = np.random.default_rng(0)
    if mechanism == "laplace":
        scale = SENSITIVITY / EPSILON
        return (lambda: laplace.laplace_mechanism(value, SENSITIVITY, EPSILON),
                lambda: value + generator.laplace(0.0, scale, value.size),
                laplace._laplace_mechanism_work.__code__, laplace.COST)
    sigma = gaussian.analytic_sigma(SENSITIVITY, EPSILON, DELTA)
    return (lambda: gaussian.gaussian_mechanism(value, SENSITIVITY, EPSILON, DELTA),
            lambda: value + generator.normal(0.0, sigma, value.size),
            gaussian._gaussian_mechanism_work.__code__, gaussian.COST)


def breakdown(mechanism: str, n: int, repeats: int = REPEATS) -> Breakdown:
    """Time one release of ``n`` values stage by stage (``mechanism``: laplace or gaussian).

    Each stage is its CPU time in the best traced run less its trace events' cost (so the
    stages add up to the best untraced run); the release lasts its deadline
    (``cost.seconds(n)``, public) or its work if that is longer, and the padding is the
    difference.
    """
    value = np.linspace(0.0, 1000.0, n)
    release, baseline, work, cost = _release(mechanism, value)
    release()                                       # warm: tables built, code specialised
    tracers, works = [], []
    for _ in range(repeats):                        # traced and untraced runs interleaved
        tracers.append(StageTracer(work, value))
        tracers[-1].run(release)
        with unpadded():
            works.append(best_ns(release, 1))
    tracer, work_ns = min(tracers, key=lambda t: t.whole), min(works)   # best against best
    wall_ns = best_ns(release, repeats, time.perf_counter_ns)
    release_ns = max(work_ns, round(cost.seconds(n) * 1e9))
    y, z = np.ones(n), np.empty(n)
    pass_ns = best_ns(lambda: np.add(value, y, out=z), repeats)
    source = default()
    bytes_ns = best_ns(lambda: source.bytes(tracer.counts["bytes"]), repeats)
    numpy_ns = best_ns(baseline, repeats)
    events = sum(tracer.events.values())
    per_event = (tracer.whole - work_ns) / events    # the tracer's cost per event
    stages = {stage: (tracer.times[stage] - per_event * tracer.events[stage]) / 1e3
              for stage in STAGES[:-1]}
    stages[PADDING] = (release_ns - work_ns) / 1e3
    return Breakdown(mechanism, n, stages, release_ns / 1e3, work_ns / 1e3,
                     tracer.whole / 1e3, events, per_event, wall_ns / 1e3, numpy_ns / 1e3,
                     pass_ns / 1e3, bytes_ns / 1e3, dict(tracer.counts))


def table(sizes: tuple[int, ...] = SIZES, repeats: int = REPEATS,
          mechanisms: tuple[str, ...] = ("laplace", "gaussian")) -> list[Breakdown]:
    """The breakdowns of every mechanism at every size."""
    return [breakdown(mechanism, n, repeats) for mechanism in mechanisms for n in sizes]


def report(result: Breakdown) -> str:
    """The printed table of one breakdown."""
    counts, n = result.counts, result.n
    lines = [f"\n{result.mechanism} release, n = {n:,}: {result.release_us:,.0f} µs padded "
             f"(deadline; {result.wall_us:,.0f} µs wall time measured), "
             f"{result.work_us:,.0f} µs work alone ({result.traced_us:,.0f} µs traced: "
             f"{result.events:,.0f} events at {result.per_event_ns:,.0f} ns taken off)",
             f"{'stage':<32} {'µs':>10} {'share':>7} {'passes':>7}"]
    for stage in STAGES:
        micro = result.stages[stage]
        lines.append(f"{stage:<32} {micro:>10,.0f} {micro / result.release_us:>7.1%} "
                     f"{micro / result.pass_us:>7.1f}")
    lines.append(f"{'release (sum)':<32} {sum(result.stages.values()):>10,.0f} "
                 f"{sum(result.stages.values()) / result.release_us:>7.1%} "
                 f"{result.release_us / result.pass_us:>7.1f}")
    numpy_name = "laplace" if result.mechanism == "laplace" else "normal"
    proposals = counts["proposals"]
    first = counts["values"]
    lines += [
        f"numpy {numpy_name} + add: {result.numpy_us:,.0f} µs; speed against it: padded "
        f"{result.numpy_us / result.release_us:.2f}×, work alone "
        f"{result.numpy_us / result.work_us:.2f}×; one pass (np.add): {result.pass_us:,.0f} µs",
        f"deadline {1e3 * result.release_us / n:,.0f} ns per value, work alone "
        f"{1e3 * result.work_us / n:,.1f}, NumPy {1e3 * result.numpy_us / n:,.1f} (margin "
        f"{margin():g}, V = {reference().vector * 1e9:.2f} ns)",
        f"ChaCha20 bytes alone ({counts['bytes']:,} bytes, one call): "
        f"{result.bytes_us:,.0f} µs = {result.bytes_us / result.work_us:.1%} of the work",
        f"bits read per value {8 * counts['bytes'] / n:.1f}; rejection rate "
        f"{1 - first / proposals:.2%}; refined at the 2nd level {counts['refined'] / proposals:.1%}"
        f"; proposals per value {proposals / first:.4f}",
        f"acceptance: {counts['checked'] / proposals:.1%} of proposals checked against "
        f"thresholds, {counts['undecided'] / proposals:.2%} undecided after the first bits",
        f"sampler passes (Envelope._fill calls) per release: {counts['fills']} over "
        f"{-(-n // noise._BLOCK):d} block(s) of up to {noise._BLOCK:,} values"]
    return "\n".join(lines)


def main() -> None:
    load = os.getloadavg()
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{os.cpu_count()} CPUs; CPU times, best of {REPEATS}; padding to the deadline")
    for result in table():
        print(report(result))
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
