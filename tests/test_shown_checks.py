"""A check shown in a randomized answer runs in the grader as in a notebook (adversarial
review 12, F4): in a real :class:`~dpkit.course.sandbox.Sandbox`, the student's function
sees the calls the real check makes in a notebook, the stand-in's verdict stays the
placeholder, value checks call nothing, and nothing runs outside a cell.

Deterministic: the checks use fixed seeds, and the functions here draw from the generators
they are given. Each test takes a real sandbox and one run of the Laplace check through it
(seconds on a busy 2-core machine)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dpkit.check
from dpkit.check._common import lent_generator
from dpkit.course.sandbox import Limits, Sandbox
from dpkit.course.wire import RUN_IN_GRADER

pytestmark = pytest.mark.slow

#: A release that records each call's arguments and draw: its records in a notebook and in
#: the sandbox must be the same.
RECORDER = """
import dpkit
calls = []

def my_laplace(value, sensitivity, epsilon, generator):
    noise = generator.laplace(0.0, sensitivity / epsilon)
    calls.append((value, sensitivity, epsilon, noise))
    return value + noise
"""
#: Adversarial review 12, F4 (``/tmp/adv12/subs/standin_timing_answer.py``): the answer
#: times its own shown check, and releases the exact value when it took real time.
TIMING_ANSWER = """
import time
import dpkit.check

def my_laplace(value, sensitivity, epsilon, generator):
    noise = generator.laplace(0.0, sensitivity / epsilon)
    return value if _mode[0] else value + noise

_mode = [False]
_t0 = time.perf_counter()
print(dpkit.check.check_laplace_mechanism(my_laplace))
_mode[0] = time.perf_counter() - _t0 > 0.02   # a real check takes seconds, a stand-in none
"""


def _in_notebook(cell: str) -> dict:
    """``cell`` run here, with the real checks, as a notebook runs it: its namespace."""
    namespace: dict = {"__name__": "__main__"}
    exec(compile(cell, "<notebook>", "exec"), namespace)
    return namespace


def test_a_shown_check_calls_the_function_as_the_real_check_does_in_a_notebook():
    """``print(dpkit.check.check_laplace_mechanism(my_laplace))`` in a cell calls
    ``my_laplace`` as many times, with the same arguments and the same generators' draws,
    as the real check run in-process; the verdict shown is still the placeholder."""
    cell = RECORDER + "verdict = dpkit.check.check_laplace_mechanism(my_laplace)\n"
    notebook = _in_notebook(cell)
    assert notebook["verdict"].passed and len(notebook["calls"]) > 8000
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        assert sandbox.run([cell + "shown = (verdict.passed, str(verdict))\n"]) == [None]
        assert sandbox.get("calls") == [tuple(c) for c in notebook["calls"]]
        passed, shown = sandbox.get("shown")
        assert passed is True and "not run here" in shown


def test_the_placeholder_is_shown_even_when_the_real_check_fails():
    """A release with no noise fails the real check (which stops at its first test); in
    the sandbox it is called as often, and the stand-in still returns the placeholder: the
    verdict never reaches the worker."""
    cell = ("import dpkit\ncalls = []\n"
            "def my_laplace(value, sensitivity, epsilon, generator):\n"
            "    calls.append(value)\n    return value\n"
            "verdict = dpkit.check.check_laplace_mechanism(my_laplace)\n")
    notebook = _in_notebook(cell)
    assert not notebook["verdict"].passed and notebook["calls"]
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        assert sandbox.run([cell + "shown = (verdict.passed, str(verdict))\n"]) == [None]
        assert sandbox.get("calls") == notebook["calls"]
        passed, shown = sandbox.get("shown")
        assert passed is True and "not run here" in shown and "Lap" not in shown


def test_a_value_check_still_calls_nothing():
    """In one cell, a shown randomized check calls its function, and every value check
    (which stops at the first wrong value: a function could search for its answer by
    counting its calls) calls nothing and returns the placeholder."""
    values = sorted(n for n in dir(dpkit.check)
                    if n.startswith("check_") and n not in RUN_IN_GRADER)
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        errors = sandbox.run([RECORDER + "spied = []\n"
                              "def spy(*args):\n    spied.append(args)\n    return 0.5\n"
                              f"shown = [str(getattr(dpkit.check, n)(spy)) for n in {values!r}]\n"
                              "print(dpkit.check.check_laplace_mechanism(my_laplace))\n"])
        assert errors == [None], errors
        assert sandbox.get("spied") == []
        assert all("not run here" in s for s in sandbox.get("shown"))
        assert len(sandbox.get("calls")) > 8000


def test_a_check_shown_outside_a_cell_runs_nothing():
    """A stand-in check called from a function the grader calls (not from a cell) is not
    run: the worker does not ask, and the grader refuses when the worker's flag is forged;
    the same function called from a cell runs it (a control)."""
    shows = RECORDER + (
        "def shows(forge):\n"
        "    import threading\n"      # the worker's globals, through a thread's target
        "    if forge:\n"
        "        thread = next(t for t in threading.enumerate() if t.name == 'IOPub')\n"
        "        thread._target.__globals__.get('_in_cell', [False])[0] = True\n"
        "    print(dpkit.check.check_laplace_mechanism(my_laplace))\n"
        "    return len(calls)\n")
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        assert sandbox.run([shows]) == [None]
        assert sandbox.call("shows", False) == 0
        assert sandbox.call("shows", True) == 0       # asked, and refused by the grader
        assert sandbox.get("calls") == []
        assert sandbox.run(["counted = shows(False)\n"]) == [None]
        assert sandbox.get("counted") > 8000


def test_the_timing_answer_gets_its_notebook_mode_in_the_sandbox():
    """The adversarial answer that times its shown check is in its notebook mode in the
    sandbox too (it releases the exact value, which the judges then see), and the time of
    the check's calls is counted once against the submission's budget."""
    notebook = _in_notebook(TIMING_ANSWER)
    assert notebook["_mode"] == [True]
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        left, start = sandbox.left, time.monotonic()
        assert sandbox.run([TIMING_ANSWER]) == [None]
        took, used = time.monotonic() - start, left - sandbox.left
        assert sandbox.get("_mode") == notebook["_mode"]
        assert sandbox.call("my_laplace", 5.0, 1.0, 1.0, lent_generator(7)) == 5.0
    # the run is charged no more than it took: the check's calls, made within it, are not
    # charged a second time (an accounting identity, not a speed)
    assert 0 < used <= took


def test_a_generator_given_to_a_shown_check_keeps_its_draws():
    """The Gaussian check's generators are lent as in a notebook: the draws the sandboxed
    function makes are the draws it makes in-process."""
    cell = ("import dpkit\nseen = []\n"
            "def noise(sigma, size, generator):\n"
            "    draws = generator.normal(0.0, sigma, size)\n"
            "    seen.append((sigma, size, float(draws[0])))\n    return draws\n"
            "print(dpkit.check.check_gaussian_noise(noise))\n")
    notebook = _in_notebook(cell)
    with Sandbox(Limits(call_seconds=120)) as sandbox:
        assert sandbox.run([cell]) == [None]
        assert sandbox.get("seen") == [tuple(s) for s in notebook["seen"]]
    assert np.isfinite([s[2] for s in notebook["seen"]]).all()
