"""Breaker review 33: a5d3c94 (clipping's cost constants at 0.6 times) and bc3c311 (the
timing store keyed per row by the import closure of the row's function).

F1. ``choose_clip_bound`` and ``auto_avg`` accept a Decimal row of up to
:data:`~dpkit._exact.MAX_ROW_DECIMAL_DIGITS` (608) digits and round it with ``float()``,
whose cost grows where the row lies near a halfway point between two floats (the
correctly rounded conversion then compares it in big-int arithmetic): 608 digits near the
smallest normal's halfway point cost about 27 µs a row (1.0 U at U = 27.8 µs), against
1.4-2.0 µs for the 360- and 608-digit ``0.777…`` and 0.4 µs for ``Decimal("0.1")``. The
deadline charges 0.3 U a row (0.6 at margin 2; 0.5 and 1.0 before a5d3c94), and
``benchmarks/deadlines.py``, from which it was set, times no such row: its longest Decimal
has 360 digits (:data:`~dpkit._exact.MAX_DECIMAL_DIGITS`, the SVT's limit, not the rows').
Measured (load 2.0-2.4, core 0 pinned, the other core busy; unpadded work over the
margin-1 deadline, 100 calls): ``choose_clip_bound`` of 1,000 such rows at ``max_rows``
1,000 and bounds 1..100, median 3.38, 99.9th percentile 5.51 (margin 2 covers 2);
``auto_avg`` 2.64 and 3.71; the default bounds 1.86 and 1.85 at the median; 64 rows 1.39
and 1.21 (300 calls at load 1.7-1.8: 3.05 and 4.80, ``auto_avg`` 2.71 and 3.95; the
360-digit ``0.777…`` 0.25 and 0.39). Padded, 2,000 calls a side interleaved (1,000 hard
rows vs 999 and one 0.1): 4,000 overruns in 4,000 releases.

F2. A row's store version hashes the dpkit modules its function's module imports, but
the calls a row times also run code no version covers: the calls and the callbacks
``benchmarks/timing.py`` defines (the SVT rows' query functions run inside the release,
between its steps; the data each row passes), and the import-time code of the 10-24 dpkit
modules the timing process loads beyond the row's closure (process-wide state: the
margin, the warm-up registry, the samplers' shared table caches). A one-line edit of
either changes a row's timing and keeps its version, so the store would pool timings of
different code under one hash.

F3. ``range_queries``' last step releases up to ``c`` answers, each a discrete Laplace draw
of scale ``2**bits · 2c/ε`` (public), charged ``COST.per_object`` (1.5 U) whatever that
scale; the sampler's work grows with it (:mod:`dpkit.laplace` adds
``scalar_extra_work(scale)`` to its scalar deadline for that reason; ``range_queries`` added
nothing; now it adds :func:`dpkit.laplace.draw_extra_work` per answer). Measured (unpadded,
secure source, 500 calls, load 3.7-4.1 on core 0): at ``c = 300`` the last step's work was
1.24-1.63 times its margin-1 budget at the median (ε = 1) and 2.05-2.20 at ε = 300 · 2**-59
(a small ε: the smallest its check allows is 2c · 2**-64), 99.9th percentile 2.6-5.2; at
``c = 30`` and the small ε, 1.30-1.41 at the median.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from decimal import ROUND_DOWN, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

from test_timing import deadlines  # noqa: F401 (the fixture; tests/ is on sys.path)

import dpkit
from dpkit._exact import MAX_ROW_DECIMAL_DIGITS
from dpkit.rng import seeded
from dpkit.svt import range_queries

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
ROOT = Path(dpkit.__file__).resolve().parent


def _near_halfway(value: Decimal) -> bool:
    """Whether ``value`` lies within ``2**-1000`` ulp of a halfway point between two
    floats: ``float()`` must then compare it with that point in big-int arithmetic."""
    exact, nearest = Fraction(value), float(value)
    ulp = Fraction(math.ulp(nearest))
    gap = min(abs(exact - (Fraction(nearest) + side * ulp / 2)) for side in (-1, 1))
    return gap < ulp * Fraction(1, 2**1000)


def _rows_of(call) -> object:
    """The rows a case of ``deadlines.py`` passes (its lambda's first default)."""
    return (call.__defaults__ or (None,))[0]


def test_the_clipping_deadlines_are_measured_on_the_slowest_decimal_row(benchmarks) -> None:
    """F1: ``deadlines.py``, which sets the clipping functions' per-row cost, must time lists
    of the slowest row the functions accept: Decimals of ``MAX_ROW_DECIMAL_DIGITS`` digits
    near a halfway point (about 27 µs each to round, against 2 µs for its longest
    Decimal today, 360 digits ``0.777…``)."""
    script, _ = benchmarks
    timed = {"choose_clip_bound": False, "auto_avg": False}
    for name, _size, call in script._cases():
        function = name.split(" ")[0]
        rows = _rows_of(call)
        if function in timed and isinstance(rows, list) and isinstance(rows[0], Decimal):
            digits = len(rows[0].as_tuple().digits)
            timed[function] |= digits == MAX_ROW_DECIMAL_DIGITS and _near_halfway(rows[0])
    assert timed == {"choose_clip_bound": True, "auto_avg": True}


def _copy(tmp_path: Path) -> Path:
    """A copy of dpkit's and the benchmarks' Python files (the store's hashes read them)."""
    for folder in (ROOT, BENCHMARKS):
        for path in folder.rglob("*.py"):
            target = tmp_path / folder.name / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return tmp_path


def _versions(root: Path, keys: list[str]) -> dict[str, str]:
    """The store versions of the rows ``keys``, computed by the copy at ``root``."""
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); import timing_accumulate as a; "
             "keys = json.loads(sys.argv[2]); "
             "print(json.dumps({p.key: a.row_version(p) for p in a.all_pairs() "
             "if p.key in keys}))")
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", probe, str(root / "benchmarks"),
                          json.dumps(keys)], capture_output=True, text=True, check=True,
                         env=env, cwd=root).stdout
    return json.loads(out)


def _edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of ``old`` in ``path`` by ``new``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


#: An above_threshold row (its query functions are ``timing.py``'s) and a clipping row.
SVT_ROW = "above_threshold | 64 | answers 100.25+i vs 100.1+i (both None)"
CLIP_ROW = "choose_clip_bound | 1000 | one row 0.0 (edge) vs -5.0 (clipped)"


def test_a_one_line_change_to_a_rows_calls_changes_its_version(tmp_path) -> None:
    """F2: the SVT rows' query functions (``benchmarks/timing.py``'s ``_queries``) run inside
    the release, between its steps, and ``timing.py`` builds every row's data. One line
    there -- the threshold far above every answer brought below them, so the release stops
    at the first query instead of reading all 64 -- changes what the row times (and makes
    its description false): its version must change."""
    root = _copy(tmp_path)
    before = _versions(root, [SVT_ROW])
    _edit(root / "benchmarks" / "timing.py", "    high = 1e6\n", "    high = -1e6\n")
    after = _versions(root, [SVT_ROW])
    assert set(before) == {SVT_ROW} and after[SVT_ROW] != before[SVT_ROW]


def test_a_one_line_change_to_process_state_changes_every_rows_version(tmp_path) -> None:
    """F2: ``timing_accumulate.py`` times every row in one process, which imports every
    release module (``timing.py`` does): their import-time code runs there and can set
    state a row's code reads. One line in ``dpkit/snapping.py``, outside the clipping
    functions' closure, sets the process's timing margin to 3, so every clipping release
    waits 1.5 times as long: the clipping row's version must change (or the row be timed
    in a process that does not load ``snapping.py``)."""
    root = _copy(tmp_path)
    before = _versions(root, [CLIP_ROW])
    _edit(root / "dpkit" / "snapping.py", "\nwarm_up_calls(",
          "\nset_margin(3.0)\nwarm_up_calls(")
    _edit(root / "dpkit" / "snapping.py", "from dpkit.timing import ",
          "from dpkit.timing import set_margin, ")
    after = _versions(root, [CLIP_ROW])
    assert set(before) == {CLIP_ROW} and after[CLIP_ROW] != before[CLIP_ROW]


def test_a_change_of_numpy_or_python_changes_a_rows_version(benchmarks, monkeypatch) -> None:
    """F2: the store pools a row's chunks across runs, and a chunk records neither NumPy's
    nor Python's version (nor gmpy2's): an upgrade changes the time of every row (the
    clipping rows are NumPy sorts, searches and cumulative sums) and keeps every version."""
    _, accumulate = benchmarks
    pair = next(p for p in accumulate.all_pairs() if p.key == CLIP_ROW)
    before = accumulate.row_version(pair)
    monkeypatch.setattr(accumulate.np, "__version__", "0.0.0-other")
    assert accumulate.row_version(pair) != before


def test_range_queries_budget_grows_with_the_noise_scale(deadlines) -> None:  # noqa: F811
    """F3: the same 30 answers released at ε = 2c · 2**-60 (near the smallest
    ``range_queries`` accepts for ``c = 30``, 2c · 2**-64; noise scale about ``2**85`` grid
    units) and at ε = 1 (about ``2**26``): the draws at the far scale cost more (median work
    1.30-1.41 of the budget against 0.80-0.86), so the budget must grow with the scale, as
    the Laplace mechanism's does."""
    c = 30
    queries = [lambda data, i=i: data[i] for i in range(c)]
    answers = [2**1000 - 1] * c
    budgets = []
    for epsilon in (1.0, 2.0**-60 * 2 * c):
        assert len(range_queries(queries, answers, c, 0.0, epsilon, rng=seeded(1))) == c
        budgets.append(deadlines[-1])   # the release's own (a re-warm's come before it)
    near, far = budgets
    assert far > near


def midpoint_row(x: float) -> Decimal:
    """:data:`MAX_ROW_DECIMAL_DIGITS` digits just below the halfway point between ``x`` and
    the next float up (the slowest kind of row for ``float()`` to round)."""
    halfway = Fraction(x) + Fraction(math.ulp(x)) / 2
    with localcontext() as context:
        context.prec, context.rounding = MAX_ROW_DECIMAL_DIGITS, ROUND_DOWN
        return Decimal(halfway.numerator) / Decimal(halfway.denominator)


def test_a_long_decimal_row_is_cut_before_it_is_rounded() -> None:
    """F1, fixed: a Decimal row of more than ``ROW_DIGITS_ROUNDED`` digits is cut toward
    zero to that many before ``float()`` rounds it, so no row costs more to round than a
    40-digit one (608 digits near a halfway point cost about 27 µs, 40 digits at most
    1.4 µs). The cut is monotone and moves the float by at most one step."""
    from dpkit.svt.clipping import ROW_DIGITS_ROUNDED, _short_decimals
    low = sys.float_info.min
    rows = [midpoint_row(x) for x in (low, 5e-324, 1.0, 123.456, 1e300)]
    cut = _short_decimals(rows)
    assert all(len(row.as_tuple().digits) <= ROW_DIGITS_ROUNDED for row in cut)
    for row, short in zip(rows, cut, strict=True):
        assert abs(float(short) - float(row)) <= math.ulp(float(row))
    ordered = sorted(rows + [r.next_plus() for r in rows] + [r.next_minus() for r in rows])
    floats = [float(r) for r in _short_decimals(ordered)]
    assert floats == sorted(floats)
