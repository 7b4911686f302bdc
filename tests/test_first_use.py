"""First-use work kept out of deadlines: warm-ups and tables built per public parameter.

The first release of a function in a process, and the first release at a new ε (or
sensitivity, δ, σ²), used to do one-off work inside the deadline (Python specialising the
code; tables of the samplers built for the new scale), up to hundreds of times a scalar
release's budget: such a release overran, and its time then showed its data. These tests
check the structure that prevents it, never a time (timing asserts belong in benchmarks/).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpkit.timing as timing
from dpkit._samplers import tables
from dpkit.laplace import laplace_mechanism
from dpkit.rng import seeded

ROOT = Path(__file__).resolve().parents[1]
#: The modules of the DP core whose caches must be public tables (not the teaching code).
CORE = [path for path in sorted((ROOT / "dpkit").rglob("*.py"))
        if not {"course", "check", "plots", "attacks", "naive"} & set(path.parts)
        and path.name not in ("widgets.py", "tables.py")]


def _padded_work_functions() -> set[str]:
    """The work functions the DP core passes to ``run_padded``: every release."""
    names = set()
    for path in CORE:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_padded":
                names.add(f"{path.stem}.{node.args[1].id}")
    return names


def test_every_release_function_has_a_warm_up():
    """Every work function passed to ``run_padded`` is registered for a warm-up at import
    (a release added without one fails here). Run in a fresh process: a warm-up is
    dropped once it has run."""
    code = textwrap.dedent("""
        import dpkit.exponential, dpkit.gaussian, dpkit.laplace, dpkit.randomized_response
        import dpkit.snapping, dpkit.svt, dpkit.timing as timing
        print(" ".join(sorted(f"{w.__module__.rsplit('.', 1)[-1]}.{w.__name__}"
                              for w in timing._state.warm_ups)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()
    expected = _padded_work_functions()
    assert len(expected) >= 12
    assert set(out) == expected


def test_the_warm_up_runs_once_unpadded_before_the_first_clock(monkeypatch):
    """The first ``run_padded`` of a work function first runs its warm-ups, inside
    ``unpadded`` and before the clock starts, on every value and with both sources; the
    second does not."""
    log = []

    def work(clock, value):
        log.append(("work", value, bool(getattr(timing._state.local, "depth", 0)),
                    len(timing._active())))
        return value

    def release(value, rng):
        log.append(("warm", type(value).__name__, rng is None))
        return timing.run_padded(timing.Cost(fixed=0.0), work, "warm")

    monkeypatch.setattr(timing, "_wait_until", lambda deadline: False)
    timing.warm_up_with(work, release)
    assert timing.run_padded(timing.Cost(fixed=0.0), work, "real") == "real"
    warm = [entry for entry in log if entry[0] == "warm"]
    values = len(timing._warm_up_values())
    assert len(warm) == 2 * timing.WARM_UP_ROUNDS * values
    assert {entry[2] for entry in warm} == {True, False}      # default and seeded sources
    assert log[-1] == ("work", "real", False, 1)               # the release itself: padded
    assert all(entry[2] for entry in log[:-1] if entry[0] == "work")  # warm-ups: unpadded
    log.clear()
    timing.run_padded(timing.Cost(fixed=0.0), work, "again")
    assert log == [("work", "again", False, 1)]


def test_a_table_built_inside_a_release_moves_its_deadline_back(monkeypatch):
    """A public table built during a release (a new scale) moves the running deadline back
    by the time the build took; a cached table moves nothing, nor does a build outside a
    release."""
    built = []

    @tables.public_table(maxsize=4)
    def table(scale):
        built.append(scale)
        return scale * 2

    reported = []
    took = timing.public_work_took
    monkeypatch.setattr(timing, "public_work_took",
                        lambda nanoseconds: (reported.append(nanoseconds), took(nanoseconds)))
    starts = []

    def work(clock, scale):
        before = clock._start
        table(scale)
        starts.append(clock._start - before)

    monkeypatch.setattr(timing, "_wait_until", lambda deadline: False)
    timing.run_padded(timing.Cost(fixed=1.0), work, 3)
    timing.run_padded(timing.Cost(fixed=1.0), work, 3)
    assert built == [3]
    assert len(reported) == 1 and reported[0] > 0
    assert starts == [reported[0], 0]
    table(5)                       # outside any release: reported, nothing to move
    assert len(reported) == 2 and not timing._active()


def test_a_nested_build_is_counted_once(monkeypatch):
    reported = []
    monkeypatch.setattr(timing, "public_work_took", reported.append)

    @tables.public_table(maxsize=4)
    def inner(x):
        return x + 1

    @tables.public_table(maxsize=4)
    def outer(x):
        return inner(x) * 2

    assert outer(1) == 4
    assert len(reported) == 1


def test_the_cores_caches_are_public_tables():
    """No cache of the DP core is a bare ``lru_cache``: a table built inside a release is
    either counted out of its deadline (:func:`dpkit._samplers.tables.public_table`) or
    not cached at all."""
    bare = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in CORE
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for decorator in node.decorator_list
            if "lru_cache" in ast.unparse(decorator) or ast.unparse(decorator).endswith("cache")]
    assert not bare, bare


@pytest.mark.parametrize("epsilon", [0.7, 2.5])
def test_a_release_at_a_new_epsilon_builds_its_tables_outside_the_deadline(monkeypatch,
                                                                           epsilon):
    """The tables of a new scale are built during the release but reported (so the deadline
    moves back by their time): a release at a new ε builds, and every build is seen."""
    reported = []
    monkeypatch.setattr(timing, "public_work_took", reported.append)
    monkeypatch.setattr(timing, "_wait_until", lambda deadline: False)
    laplace_mechanism(0.1, 1.0, 1.0, rng=seeded(1))   # warm-up and the ε = 1 tables
    reported.clear()
    laplace_mechanism(0.1, 1.0, epsilon * 1.000123, rng=seeded(1))
    assert reported, "no table built for a new epsilon: the test no longer tests anything"
