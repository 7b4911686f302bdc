"""Breaker review 27: findings on the timing promise (reproducers; deterministic, no timing).

The first two were fixed in 13930bc (their tests failed on 282a17f); the third fails on
c98416f.

* **A light re-warm of the exponential mechanism warms nothing.** After a pause of 50 µs to
  10 ms a release first re-warms its function lightly (:mod:`dpkit._warming`): its warm-up
  release once on the first warm-up value, ``0.5``, through the padded path. The base-2
  exponential mechanism takes a 1-d array of utilities and refuses a scalar before its
  clock starts, so its light re-warm is one refusal: no rounding, no sampler, no deadline,
  no wait; and the stamp it leaves says the function is warm. Every other release function
  reaches its sampler in its light re-warm. Measured (core 1, load 1.0-1.7 on 2 cores):
  no effect yet on this quiet machine: after sleeps of 0.1-5 ms the work took a median
  0.14-0.17 of the deadline (99th percentile 0.29-0.38) against 0.15-0.17 (0.30-0.41) with
  the re-warm made to work (its scalar as a 1-element array), no overrun in 300 releases
  a side even at margin 1 (1 of 300 at 282a17f after 1 ms); a working light re-warm adds
  about 0.3 ms before the clock (medians 1106 against 1421 µs a call after 1 ms sleeps).
* **A list mixing floats with an int that float64 cannot hold is rounded silently.** The
  exponential mechanism refuses ``[2**53 + 1, 1]`` (an exactness error), but NumPy turns
  ``[2**53 + 1, 1.0]`` into a float64 array, rounding the int to ``2**53``, and
  :func:`dpkit.exponential._utilities` checks exactness only for integer and object arrays:
  the list is accepted. Whether the same int is refused depends on whether another element
  of the list is a float (the contract: a value float64 cannot hold is refused, never
  rounded silently).
* **Randomized response selects its reports with ``np.where``**, whose loop branches on
  each element of the condition, here the coin flips: its cost follows their pattern
  (branch mispredictions), as :mod:`dpkit._samplers` ("Timing": selections by bit masks,
  never :func:`numpy.where`) and ``tests/test_branchless.py`` rule out for the samplers.
  Given the reports, the coins are ``reports == answers``, so the unpadded time depends
  on the answers; one answer moves it by about one misprediction (nanoseconds), and the
  deadline covers the whole selection.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_branchless import BRANCHY  # tests/ is on sys.path under pytest
from tracing import calls_of

import dpkit._warming
import dpkit.timing
from dpkit import exponential, laplace, randomized_response
from dpkit.exponential import Eta, base2_exponential_mechanism, probabilities
from dpkit.laplace import laplace_mechanism
from dpkit.rng import seeded
from dpkit.timing import unpadded

ETA = Eta.from_epsilon(1.0)


@pytest.fixture()
def light_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pause re-warms lightly, never fully (the full re-warm is not under test); deadlines
    at margin 1, so that the traced padded releases wait little."""
    monkeypatch.setattr(dpkit._warming, "REWARM_AFTER_NS", 2**62)
    margin = dpkit.timing.margin()
    dpkit.timing.set_margin(1.0)
    yield
    dpkit.timing.set_margin(margin)


def calls_after_a_pause(work: Callable[..., Any], release: Callable[[], Any]) -> list[str]:
    """The calls of a padded ``release()`` made when ``work`` was last released a second
    ago: its light re-warm, then the release itself."""
    release()                                               # warmed up, stamped
    dpkit._warming._last[work] = time.perf_counter_ns() - 10**9
    assert dpkit._warming.cold(work) == "light"
    calls, _ = calls_of(release)
    return calls


@pytest.mark.usefixtures("light_only")
def test_a_light_rewarm_of_the_exponential_mechanism_runs_its_sampler() -> None:
    """On main the re-warm's release of ``0.5`` is refused before its clock (``utilities
    must have 1 dimension(s)``): ``fast_sample`` and the rounding run once, for the
    release only, and the function is stamped warm."""
    calls = calls_after_a_pause(
        exponential._base2_exponential_mechanism_work,
        lambda: base2_exponential_mechanism(np.zeros(3), ETA, utility_min=0, utility_max=8,
                                            rng=seeded(1)))
    assert calls.count("_rounded_offsets") >= 2 and calls.count("fast_sample") >= 2, (
        f"after a pause, _rounded_offsets ran {calls.count('_rounded_offsets')} times and "
        f"fast_sample {calls.count('fast_sample')} times: the light re-warm did not reach them")


@pytest.mark.usefixtures("light_only")
def test_a_light_rewarm_of_the_laplace_mechanism_runs_its_sampler() -> None:
    """Control: the same pause before a Laplace release draws noise twice (the re-warm's
    scalar release and the release), so the test above fails for the refusal it names."""
    calls = calls_after_a_pause(laplace._laplace_mechanism_work,
                                lambda: laplace_mechanism(0.25, 1.0, 1.0, rng=seeded(1)))
    assert calls.count("discrete_laplace") >= 2


MIXED = [[2**53 + 1, 1.0], [0.5, 2**60 + 1], [np.int64(2**62 + 1), 0.25], (2**53 + 1, 0.5)]


@pytest.mark.parametrize("utilities", MIXED, ids=["2**53+1, 1.0", "0.5, 2**60+1",
                                                   "int64 2**62+1, 0.25", "tuple"])
def test_an_int_float64_cannot_hold_is_refused_beside_a_float(utilities: Any) -> None:
    """``np.asarray`` rounds the int to a double (``2**53``, ``2**60``, ``2**62``); on
    main the release and :func:`probabilities` accept the rounded list."""
    with pytest.raises(ValueError, match="exactly representable"), unpadded():
        base2_exponential_mechanism(utilities, ETA, utility_min=0, utility_max=8,
                                    rng=seeded(0))
    with pytest.raises(ValueError, match="exactly representable"):
        probabilities(utilities, ETA, utility_min=0, utility_max=8)


def test_an_int_float64_cannot_hold_is_refused_among_ints() -> None:
    """Control: the same int beside another int is refused on main, so the test above
    fails for the float beside it."""
    with pytest.raises(ValueError, match="exactly representable"), unpadded():
        base2_exponential_mechanism([2**53 + 1, 1], ETA, utility_min=0, utility_max=8,
                                    rng=seeded(0))


def branchy_calls(function: Callable[..., Any]) -> set[str]:
    """The kernels of :data:`test_branchless.BRANCHY` that ``function``'s source calls."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return BRANCHY & {node.func.attr for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}


def test_randomized_response_selects_its_reports_without_a_branch_per_answer() -> None:
    """Measured on main, ``np.where(coins, answers, ~answers)`` on 10**5 bools, unpadded
    (core 1, load 3.2 on 2 cores, medians of 3000): 58 µs with constant coins, 195 µs at
    ε = 1 (p = 0.73), 309 µs with fair coins; ``np.logical_xor`` 5.5-5.7 µs whatever
    the coins. A whole release of 10**5 all-True answers, unpadded: 1120 µs at ε = 20,
    1430 µs at ε = 1e-6 (``t9_rr_where.py``, ``t9b_where.py`` in the review's scratch)."""
    assert branchy_calls(randomized_response._randomized_response_work) == set()


def test_the_branchy_kernel_check_sees_np_where() -> None:
    """Control: the check finds ``np.where`` where it is called, so the test above fails
    for the call it names."""
    def select(condition: np.ndarray, x: np.ndarray) -> np.ndarray:
        return np.where(condition, x, ~x)

    assert branchy_calls(select) == {"where"}
