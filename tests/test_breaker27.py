"""Breaker review 27: findings on the timing promise (reproducers; deterministic, no timing).

* **A light re-warm of the exponential mechanism warms nothing.** After a pause of 50 µs to
  10 ms a release first re-warms its function lightly (:mod:`dpkit._warming`): its warm-up
  release once on the first warm-up value, ``0.5``, through the padded path. The base-2
  exponential mechanism takes a 1-d array of utilities and refuses a scalar before its
  clock starts, so its light re-warm is one refusal: no rounding, no sampler, no deadline,
  no wait; and the stamp it leaves says the function is warm. Every other release function
  reaches its sampler in its light re-warm.
* **A list mixing floats with an int that float64 cannot hold is rounded silently.** The
  exponential mechanism refuses ``[2**53 + 1, 1]`` (an exactness error), but NumPy turns
  ``[2**53 + 1, 1.0]`` into a float64 array, rounding the int to ``2**53``, and
  :func:`dpkit.exponential._utilities` checks exactness only for integer and object arrays:
  the list is accepted. Whether the same int is refused depends on whether another element
  of the list is a float (the contract: a value float64 cannot hold is refused, never
  rounded silently).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from tracing import calls_of  # tests/ is on sys.path under pytest

import dpkit._warming
import dpkit.timing
from dpkit import exponential, laplace
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
