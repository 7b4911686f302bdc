"""Inputs every release function validates the same way: masked arrays and empty inputs.

Each test here failed on the code before its fix (the failure is quoted in its docstring)
and passes now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.gaussian import gaussian_mechanism
from dpkit.laplace import laplace_mechanism
from dpkit.randomized_response import randomized_response
from dpkit.rng import seeded
from dpkit.snapping import snapping_mechanism
from dpkit.svt import (
    above_threshold_runs,
    auto_avg,
    auto_avg_runs,
    choose_clip_bound,
    clip_bound_runs,
)

#: Every release function that takes an array of private values, as ``release(values)``.
ARRAY_RELEASES: dict[str, Callable[[Any], Any]] = {
    "laplace_mechanism": lambda v: laplace_mechanism(v, 1.0, 1.0, rng=seeded(0)),
    "gaussian_mechanism": lambda v: gaussian_mechanism(v, 1.0, 1.0, 1e-5, rng=seeded(0)),
    "auto_avg": lambda v: auto_avg(v, 1.0, rng=seeded(0)),
    "auto_avg_runs": lambda v: auto_avg_runs(v, 1.0, runs=2, rng=seeded(0)),
    "choose_clip_bound": lambda v: choose_clip_bound(v, 1.0, bounds=[1, 10, 100],
                                                     rng=seeded(0)),
    "clip_bound_runs": lambda v: clip_bound_runs(v, 1.0, bounds=[1, 10, 100], runs=2,
                                                 rng=seeded(0)),
    "above_threshold_runs": lambda v: above_threshold_runs(v, 0.5, 1.0, runs=2,
                                                           rng=seeded(0)),
    "base2_exponential_mechanism": lambda v: base2_exponential_mechanism(
        v, Eta(1, 1), utility_min=0, utility_max=10, rng=seeded(0)),
}


# -- masked arrays -------------------------------------------------------------------------

_SECRET = 7.0  # the value under the mask


def _masked_forms() -> dict[str, Any]:
    """A masked array, a list holding ``np.ma.masked``, and a masked row in a list."""
    return {"MaskedArray": np.ma.masked_array([3.0, _SECRET], mask=[False, True]),
            "masked entry": [3.0, np.ma.masked],
            "masked rows": [np.ma.masked_array([3.0, _SECRET], mask=[False, True])]}


@pytest.mark.parametrize("form", sorted(_masked_forms()))
@pytest.mark.parametrize("release", sorted(ARRAY_RELEASES))
def test_masked_arrays_are_refused(release: str, form: str) -> None:
    """``np.asarray`` drops a mask: before, a masked array was released with its masked raw
    value (``laplace_mechanism(masked_array([1.0, 1e6], mask=[0, 1]), 1, 1)`` returned
    ``[2.82, 999999.3]``). Now every array path refuses it with a TypeError saying what to
    do. (Before the fix a list holding ``np.ma.masked`` was refused with a misleading
    message, "must be a rectangular array" or "must be a real number".)"""
    values = _masked_forms()[form]
    if release == "base2_exponential_mechanism" and form == "masked rows":
        # 2-d: refused for its shape (public) before the masks (data) are looked at
        with pytest.raises(ValueError, match=r"utilities must have 1 dimension\(s\)"):
            ARRAY_RELEASES[release](values)
        return
    with pytest.raises(TypeError, match=r"must not be a numpy.ma.MaskedArray or hold masked "
                                        r"entries.*fill or compress it first"):
        ARRAY_RELEASES[release](values)


def test_masked_answers_are_refused_by_randomized_response() -> None:
    answers = np.ma.masked_array([True, False], mask=[False, True])
    with pytest.raises(TypeError, match=r"answers must not be a numpy.ma.MaskedArray"):
        randomized_response(answers, 1.0, rng=seeded(0))


def test_filled_or_compressed_arrays_are_released() -> None:
    """The remedy the message names works."""
    masked = _masked_forms()["MaskedArray"]
    for plain in (masked.filled(0.0), masked.compressed()):
        assert laplace_mechanism(plain, 1.0, 1.0, rng=seeded(0)).shape == plain.shape


# -- empty inputs --------------------------------------------------------------------------

#: The parameter each release function names in its errors.
_NAMES = {"laplace_mechanism": "value", "gaussian_mechanism": "value", "auto_avg": "values",
          "auto_avg_runs": "values", "choose_clip_bound": "values", "clip_bound_runs": "values",
          "above_threshold_runs": "answers", "base2_exponential_mechanism": "utilities"}


@pytest.mark.parametrize("empty", [[], (), np.array([]), np.zeros((0,), dtype=np.int64)],
                         ids=["list", "tuple", "float64 array", "int64 array"])
@pytest.mark.parametrize("release", sorted(ARRAY_RELEASES))
def test_empty_inputs_are_refused_the_same_way(release: str, empty: Any) -> None:
    """Three behaviours before: ``laplace_mechanism([])`` returned an empty array,
    ``gaussian_mechanism([])``, the SVT functions and the exponential mechanism raised a
    ValueError ("value must not be empty", "answers must hold at least one query answer,
    got none"), and ``randomized_response([])`` a TypeError about its dtype ("answers must
    be an array of bool, got dtype float64") while an empty bool array came back empty.
    Now every one refuses with the same ValueError naming the parameter and the value: an
    empty query has nothing to protect and no calibration, and usually means an upstream
    step selected no data (DESIGN.md: invalid input, empty sets included, is refused)."""
    name = _NAMES[release]
    with pytest.raises(ValueError, match=rf"^{name} must not be empty \(a release needs at "
                                         rf"least one value\), got "):
        ARRAY_RELEASES[release](empty)


@pytest.mark.parametrize("release", ["laplace_mechanism", "gaussian_mechanism"])
def test_arrays_with_no_elements_in_any_shape_are_refused(release: str) -> None:
    for shape in [(0,), (3, 0), (0, 2)]:
        with pytest.raises(ValueError, match=r"^value must not be empty"):
            ARRAY_RELEASES[release](np.zeros(shape))


@pytest.mark.parametrize("empty", [[], np.array([], dtype=bool), np.zeros((2, 0), dtype=bool)])
def test_randomized_response_refuses_no_answers(empty: Any) -> None:
    with pytest.raises(ValueError, match=r"^answers must not be empty \(a release needs at "
                                         r"least one value\), got "):
        randomized_response(empty, 1.0, rng=seeded(0))


# -- 0-d arrays ----------------------------------------------------------------------------

_SCALAR_RELEASES = {
    "laplace_mechanism": ARRAY_RELEASES["laplace_mechanism"],
    "gaussian_mechanism": ARRAY_RELEASES["gaussian_mechanism"],
    "snapping_mechanism": lambda v: snapping_mechanism(v, 1.0, 1.0, 100.0, rng=seeded(0)),
}


@pytest.mark.parametrize("release", sorted(_SCALAR_RELEASES))
def test_a_0d_array_is_released_as_a_float_and_a_list_of_them_refused_clearly(
        release: str) -> None:
    """Breaker, round 20: ``laplace_mechanism(np.array(1.5))`` returned a 0-d array where
    ``gaussian_mechanism`` returned a float, and ``[np.array(1.5), np.array(2.5)]`` was
    refused as "ragged" ("must be a rectangular array"), which it is not."""
    assert type(_SCALAR_RELEASES[release](np.array(1.5))) is float
    with pytest.raises(TypeError, match=r"^value must hold real numbers, not 0-d arrays, got "
                                        r"array\(1\.5\) at index 0 \(take its number with "
                                        r"\.item\(\)"):
        _SCALAR_RELEASES[release]([np.array(1.5), np.array(2.5)])
