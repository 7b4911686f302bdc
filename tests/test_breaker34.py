"""Breaker review 34: fe5f410 (a long Decimal row cut to 40 digits before it is rounded;
a timing-store row's version also hashing the row's two calls).

F1. The cut (``_short_decimals``) applied only to a plain ``Decimal`` (``type(row) is
Decimal``) in a list, a tuple or a one-dimensional object array. A Decimal subclass
(``__slots__ = ()``, so its size in memory is a Decimal's and its 608 digits are accepted),
or any other container the clipping functions accept -- a pandas Series, Index or object
array, a ``collections.deque`` -- reached ``float()`` with its 608 digits, about 27 µs a row
near a halfway point. Measured (wait switched off, margin 1, 1,000 rows, ``max_rows``
1,000, bounds 1..100, 200 calls, load 1.2-1.5, pinned to core 0): ``choose_clip_bound``
on subclass rows 3.15 times its deadline at the median (99.9th percentile 4.68),
``auto_avg`` 2.72; on a pandas Series 3.02 and 2.69 (margin 2 covers 2); the cut list,
0.25 and 0.24. The release's time is then the work's, set by the data.

F2. A signalling NaN row was refused as ``Decimal('NaN')`` (the cut made it quiet), an
error that misstates the row (before fe5f410: "cannot convert signaling NaN to float",
naming neither the parameter nor the row).

F3. ``timing_accumulate._feed`` skips an object whose ``id`` it has seen, but it also
records the ids of temporaries it builds (the list of a closure's values, a dict's items,
an object array's ``tolist()``), which are freed at once and whose ids CPython reuses for
the next such temporary: the second call's closure list gets the first's id and is never
hashed. So the values a row's second call holds (its data) do not enter the version.
And an object seen before adds nothing at all, not a back-reference, so the order of
shared values is lost too.

F4. ``_feed`` follows a call's global names only to functions, ints, floats, strings and
tuples: a ``functools.cache``-wrapped helper (``timing.py``'s ``_huge_int_rows``, which
builds the huge-int clipping row from the constant ``HUGE_BITS``) is not followed, so
neither its code nor ``HUGE_BITS`` enters that row's version.

F5. An object a call holds that is not a number, array or container counts by its type
alone: the exponential rows' ``Eta`` (a frozen dataclass) could change (other weights,
other work) and keep every such row's version.

Held: the versions are the same in two processes under ``PYTHONHASHSEED`` 1 and 2 (all 127
rows, at fe5f410 and with the proposed fix); the cut is monotone and a function of one row
(ROUND_DOWN in a private context, whatever the caller's decimal context); a Decimal too long
is still refused from its size before it is cut; ``-0`` is clipped like ``0``.
"""

from __future__ import annotations

import collections
import types
from decimal import Decimal
from pathlib import Path

import pytest

import dpkit
from dpkit.svt import auto_avg, choose_clip_bound, clipping

ROOT = Path(dpkit.__file__).resolve().parent
BENCHMARKS = ROOT.parent / "benchmarks"
DIGITS_ROUNDED = 40


class _SlottedDecimal(Decimal):
    """A Decimal subclass as large in memory as a Decimal (no ``__dict__``)."""

    __slots__ = ()


def _longest_decimal_rounded(monkeypatch, release, values) -> int:
    """Run ``release(values)`` and return the most significant digits of a Decimal that
    reached ``float()`` (the rows' one conversion, ``dpkit._checks._nearest_float``)."""
    import dpkit._checks as checks
    seen = [0]
    nearest = checks._nearest_float

    def spy(value):
        if isinstance(value, Decimal) and value.is_finite():
            seen[0] = max(seen[0], len(value.as_tuple().digits))
        return nearest(value)

    monkeypatch.setattr(checks, "_nearest_float", spy)
    release(values)
    return seen[0]


def _containers(row: Decimal) -> dict[str, object]:
    """Ten rows, the first ``row``, in each container the clipping functions accept."""
    import numpy as np
    import pandas as pd
    rows = [row] + [Decimal(37)] * 9
    return {"list": rows, "deque": collections.deque(rows),
            "object array": np.array(rows, dtype=object),
            "pandas Series": pd.Series(rows, dtype=object),
            "pandas Index": pd.Index(rows, dtype=object)}


@pytest.mark.parametrize("release", [choose_clip_bound, auto_avg])
def test_every_long_decimal_row_is_cut_before_it_is_rounded(benchmarks, monkeypatch,
                                                            release) -> None:
    """F1: the slowest row (608 digits just below a halfway point), as a Decimal or a
    subclass, in every container accepted, reaches ``float()`` with at most 40 digits."""
    deadlines, _ = benchmarks
    hardest = deadlines.HARDEST_ROW_DECIMAL
    found = {}
    for kind, row in (("Decimal", hardest), ("subclass", _SlottedDecimal(hardest))):
        for name, values in _containers(row).items():
            found[f"{kind} in {name}"] = _longest_decimal_rounded(
                monkeypatch, lambda v: release(v, 1.0, bounds=(1, 2, 3), max_rows=10),
                values)
    assert found == dict.fromkeys(found, DIGITS_ROUNDED)


@pytest.mark.parametrize("text", ["sNaN", "-sNaN"])
def test_a_signalling_nan_row_is_refused_as_given(text) -> None:
    """F2: the error names the parameter and the row as it was given."""
    with pytest.raises(ValueError, match=rf"values.*Decimal\('{text}'\)"):
        choose_clip_bound([Decimal(1), Decimal(text)], 1.0, bounds=(1, 2), max_rows=10)


def test_a_negative_zero_row_is_clipped_as_zero() -> None:
    """Held: ``-0`` and ``0`` rows give the same clipped rows (no refusal either way)."""
    rows = clipping._check_rows([Decimal("-0"), Decimal(0)], (1, 2), 10)
    assert rows.tolist() == [0.0, 0.0]


def _with_closure(function: types.FunctionType, **values) -> types.FunctionType:
    """``function`` (same code, globals, defaults) holding ``values`` in its closure."""
    names = function.__code__.co_freevars
    cells = tuple(types.CellType(values[n]) if n in values else function.__closure__[i]
                  for i, n in enumerate(names))
    return types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, cells)


#: A clipping row whose second call holds its data in a closure (as every row's does).
CLIP_ROW = "choose_clip_bound | 1000 | one row 0.0 (edge) vs -5.0 (clipped)"
HUGE_ROW = ("choose_clip_bound | 100 | list of ints, one row 2**(4e8) vs 2**(4e8)-1 "
            "(beyond the float range), max_rows 100")


def _pair(accumulate, key: str):
    return next(p for p in accumulate.all_pairs() if p.key == key)


def test_a_change_to_the_second_calls_data_changes_the_version(benchmarks) -> None:
    """F3: the same second call (same code) holding other rows -- 1,000 rows 10**300 -- must
    give the row another version; so must holding the first call's rows."""
    _, accumulate = benchmarks
    pair = _pair(accumulate, CLIP_ROW)
    before = accumulate.row_version(pair)
    others = {"big rows": [10**300] * 1000,
              "the first call's rows": pair.call_x.__closure__[
                  pair.call_x.__code__.co_freevars.index("x")].cell_contents}
    after = {name: accumulate.row_version(type(pair)(
        pair.function, pair.size, pair.description, pair.promised, pair.call_x,
        _with_closure(pair.call_y, y=rows), pair.origin)) for name, rows in others.items()}
    assert before not in after.values()


def test_the_order_of_values_shared_by_both_calls_counts(benchmarks) -> None:
    """F3: values the first call also holds still count, in their order, in the second."""
    _, accumulate = benchmarks
    pair = _pair(accumulate, CLIP_ROW)

    def version(x, y) -> str:
        return accumulate.row_version(type(pair)(
            pair.function, pair.size, pair.description, pair.promised,
            lambda: (x, 1), lambda: (y, 1)))

    assert version((5000, 7000), (5000, 7000)) != version((5000, 7000), (7000, 5000))


def test_a_cached_helpers_constant_changes_the_version(benchmarks, monkeypatch) -> None:
    """F4: the huge-int row's calls run ``timing.py``'s cached ``_huge_int_rows``, which
    reads ``HUGE_BITS``: another value (another row, another time) must change the row's
    version."""
    _, accumulate = benchmarks
    pair = _pair(accumulate, HUGE_ROW)
    before = accumulate.row_version(pair)
    monkeypatch.setattr(accumulate.audit, "HUGE_BITS", 64)
    assert accumulate.row_version(pair) != before


def test_a_change_to_an_object_a_call_holds_changes_the_version(benchmarks) -> None:
    """F5: the exponential rows' calls hold an ``Eta`` (a frozen dataclass), which ``_feed``
    counted by its type alone: ``Eta.from_epsilon(2.0)`` instead of ``1.0`` in
    ``timing.py`` (other weights, other work) kept every such row's version."""
    from dpkit.exponential import Eta
    _, accumulate = benchmarks
    pair = next(p for p in accumulate.all_pairs()
                if p.function == "base2_exponential_mechanism" and p.size == "64")
    before = accumulate.row_version(pair)
    other = Eta.from_epsilon(2.0)
    after = accumulate.row_version(type(pair)(
        pair.function, pair.size, pair.description, pair.promised,
        _with_closure(pair.call_x, eta=other), _with_closure(pair.call_y, eta=other),
        pair.origin))
    assert other != Eta.from_epsilon(1.0) and after != before
