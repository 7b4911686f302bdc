"""The samplers select between values by bit masks, never by a branch per value.

NumPy's ``where`` (and ``searchsorted``, ``argmin``, ...) run a loop that branches on each
element, so their cost depends on the pattern of a mask through branch mispredictions
(breaker review 19 certified ε ≥ 1.1 from that in the grid arithmetic). Where the mask
comes from random bits or drawn values (the block-envelope sampler's entries, the
fixed-cost Gaussian's signs) that cost reveals the noise: see "Timing" in
:mod:`dpkit._samplers`. Each place is checked structurally (its source calls none of those
kernels; the Python lines it runs do not depend on the values drawn) and for its exact
result on adversarial patterns. Everything here is deterministic.
"""

from __future__ import annotations

import ast
import functools
import inspect
import sys
import textwrap
from fractions import Fraction
from types import FrameType, ModuleType

import numpy as np
import pytest

from dpkit._samplers import bits, envelope, fixed_cost
from dpkit.rng import seeded

#: NumPy kernels that take a branch per element (or a number of steps set by the values).
BRANCHY = {"where", "select", "choose", "piecewise", "argmin", "argmax", "searchsorted"}
#: (module, function) whose selections work on noise: random bits or drawn values.
PLACES = [(envelope, "_EntryTable.decide"), (envelope, "_EntryTable.locate"),
          (envelope, "_Acceptance.__init__"), (envelope, "Envelope._fill"),
          (fixed_cost, "fixed_discrete_gaussian")]
CASES = [("laplace", Fraction(1, 3)), ("laplace", Fraction(1000)), ("laplace", Fraction(2**40)),
         ("gaussian", Fraction(100)), ("gaussian", Fraction(10**6)),
         ("gaussian", Fraction(2**46))]


@pytest.mark.parametrize(("module", "name"), PLACES,
                         ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}" for m, n in PLACES])
def test_selections_on_noise_call_no_branchy_kernel(module: ModuleType, name: str) -> None:
    """The source of each place calls none of :data:`BRANCHY` (``np.where`` was called in
    ``decide``, ``_Acceptance`` and ``_fill``, and on the Gaussian's signs)."""
    function = functools.reduce(getattr, name.split("."), module)
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    called = {node.func.attr for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert called & BRANCHY == set()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32, np.int64, np.uint64])
def test_mask_selects_exactly_on_every_pattern(dtype: type) -> None:
    """``x & m | y & ~m`` equals ``np.where(c, x, y)`` bit for bit on alternating, random,
    all-true and all-false patterns; ``(g ^ m) - m`` is ``np.where(c, -g, g)``."""
    info = np.iinfo(dtype)
    n = 4099
    generator = np.random.default_rng(5)
    x = generator.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    y = generator.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    patterns = [np.arange(n) % 2 == 0, generator.random(n) < 0.5, np.ones(n, dtype=bool),
                np.zeros(n, dtype=bool), generator.random(n) < 0.01]
    for condition in patterns:
        m = bits.mask(condition, dtype)
        assert m.dtype == dtype
        assert np.array_equal(x & m | y & ~m, np.where(condition, x, y))
    g = np.arange(-2**40, 2**40, 2**29 + 7, dtype=np.int64)
    condition = np.arange(g.size) % 3 == 1
    flip = bits.mask(condition)
    assert np.array_equal((g ^ flip) - flip, np.where(condition, -g, g))


@pytest.mark.parametrize(("kind", "parameter"), CASES)
def test_locate_is_searchsorted_on_any_keys(kind: str, parameter: Fraction) -> None:
    """The fixed-step search equals ``np.searchsorted(hi, key, "right") - 1`` on the bounds
    themselves, their neighbours, the ends, and keys in sorted, reversed and random order."""
    table = envelope.Envelope(kind, parameter).table
    hi = table.hi
    edges = np.concatenate([hi[:-1], hi[1:-1] - 1, hi[:-1] + 1, [0, (1 << 62) - 1]])
    random = np.random.default_rng(6).integers(0, 1 << 62, size=5000, dtype=np.int64)
    for keys in (np.sort(edges), np.sort(edges)[::-1], edges, random, np.sort(random)):
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        assert np.array_equal(table.locate(keys), np.searchsorted(hi, keys, side="right") - 1)


@pytest.mark.parametrize(("kind", "parameter"), CASES)
def test_decide_is_exact_on_alternating_patterns(kind: str, parameter: Fraction) -> None:
    """``decide`` returns the entry where the interval of uniforms lies inside it and -1
    elsewhere (the reference: ``searchsorted`` and ``where``), on prefixes whose verdicts
    alternate decided/undecided, in order, reversed and shuffled, at the guide's width and
    8 bits longer; and so does ``decide_public`` (the tables' builder, on public prefixes)."""
    table = envelope.Envelope(kind, parameter).table
    for nbits in (table.guide_bits, table.guide_bits + 8):
        prefix = np.arange(1 << nbits, dtype=np.int64)
        start = prefix << (62 - nbits)
        entry = np.searchsorted(table.hi, start, side="right") - 1
        inside = start + (1 << (62 - nbits)) <= table.lo[entry + 1]
        expected = np.where(inside, entry, -1)
        decided, undecided = np.flatnonzero(inside), np.flatnonzero(~inside)
        if undecided.size:
            count = min(decided.size, undecided.size)
            alternating = np.empty(2 * count, dtype=np.int64)
            alternating[0::2], alternating[1::2] = decided[:count], undecided[:count]
        else:
            alternating = decided
        shuffled = np.random.default_rng(7).permutation(prefix)
        for keys in (prefix, prefix[::-1].copy(), shuffled, alternating):
            assert np.array_equal(table.decide(keys, nbits), expected[keys])
            assert np.array_equal(table.decide_public(keys, nbits), expected[keys])


@pytest.mark.parametrize(("kind", "parameter"), [CASES[1], CASES[2], CASES[4], CASES[5]])
def test_first_undecided_counts_the_leading_accepted_rows(kind: str, parameter: Fraction) -> None:
    """``first_undecided`` (per entry for the Gaussian) is the first ``u`` whose threshold
    does not accept every offset, or ``2**k`` if none: as computed before with ``where``
    (blocks wider than 1, which have an acceptance step)."""
    env = envelope.Envelope(kind, parameter)
    size = 1 << env.table.accept_bits
    rows = env.acceptance.accept_yes.reshape(-1, size) >= env.layout.width - 1
    first = np.where(rows.all(axis=1), size, np.argmin(rows, axis=1))
    if kind == "laplace":
        assert env.acceptance.first_undecided == first[0]
    else:
        first[0] = size
        assert np.array_equal(env.acceptance.first_undecided, first)
    assert env.acceptance.least_undecided == first.min()


def _traced_fill(env: envelope.Envelope, seed: int, n: int) -> tuple[list[int], bool, bool]:
    """The lines of ``Envelope._fill`` run on one call, whether it refined an entry, and
    whether an entry drawn was that of 0 (the only proposal of the value 0)."""
    code = envelope.Envelope._fill.__code__
    lines: list[int] = []
    refined = []

    def tracer(frame: FrameType, event: str, arg: object) -> object:
        if frame.f_code is not code:
            return None
        if event == "line":
            lines.append(frame.f_lineno)
        return tracer

    def refine(*args: object) -> np.ndarray:
        refined.append(True)
        return type(env.table).refine(env.table, *args)

    env.table.refine = refine                       # on this instance only
    out = np.empty(n, dtype=np.int64)
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        env._fill(out, seeded(seed))
    finally:
        sys.settrace(previous)
        del env.table.refine
    return lines, bool(refined), bool(np.any(out == 0))


@pytest.mark.parametrize(("kind", "parameter"), [("laplace", Fraction(2000)),
                                                 ("gaussian", Fraction(10**6))])
def test_fill_runs_the_same_lines_whether_or_not_it_draws_the_entry_of_0(
        kind: str, parameter: Fraction) -> None:
    """At scales whose guide table never yields the entry of 0 (nor the tail), only a
    refined entry can: ``_fill`` once masked offsets and looked for tails only then, a pass
    that showed that a value 0 was drawn. Among 65-value calls that refined an entry, one
    that drew a 0 and one that did not run the same lines of ``_fill``."""
    env = envelope.Envelope(kind, parameter)
    assert not np.any(env.table.guide == 0)
    runs: dict[bool, list[int]] = {}
    for seed in range(3000):
        lines, refined, zero = _traced_fill(env, seed, 65)
        if refined:
            runs.setdefault(zero, lines)
        if len(runs) == 2:
            break
    assert len(runs) == 2, "no seed drew both cases"
    assert runs[True] == runs[False]
