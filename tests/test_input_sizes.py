"""Exact values of unbounded size, masks at any depth, and messages about huge values.

* Finding F2: an exact value's size is bounded (``MAX_EXACT_BITS`` bits for an int, a
  numerator or a denominator; ``MAX_DECIMAL_DIGITS`` digits for a Decimal), and a longer
  one is refused before any arithmetic on it: the values below fail the test if anything
  but their sizes is read.
* Finding F8: a masked array or entry is refused at any depth of nesting.
* Finding F9: a message that shows a value summarises a huge one (Python refuses to print
  an int of more than 4,300 digits).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from dpkit._checks import (
    check_finite_array,
    check_integer,
    check_real,
    check_rows_to_clip,
)
from dpkit._exact import (
    MAX_DECIMAL_DIGITS,
    MAX_EXACT_BITS,
    MAX_ROW_DECIMAL_DIGITS,
    as_fraction,
    describe,
)
from dpkit.gaussian import gaussian_mechanism
from dpkit.laplace import laplace_mechanism
from dpkit.randomized_response import randomized_response
from dpkit.rng import seeded
from dpkit.snapping import snapping_mechanism
from dpkit.svt import above_threshold, above_threshold_runs, range_queries, sparse
from dpkit.svt.clipping import auto_avg, choose_clip_bound


def _untouchable(*names):
    def touched(self, *args):
        raise AssertionError("the value was used before its size was checked")
    return {name: touched for name in names}


_ARITHMETIC = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
               "__truediv__", "__rtruediv__", "__floordiv__", "__mod__", "__abs__", "__neg__",
               "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__float__", "__floor__",
               "__round__", "__hash__", "as_integer_ratio", "limit_denominator", "__repr__",
               "__str__")
#: A Fraction and a Decimal on which any arithmetic fails the test: only the sizes may be
#: read (a Fraction's numerator and denominator, a Decimal's size in memory).
TripwireFraction = type("TripwireFraction", (Fraction,), _untouchable(*_ARITHMETIC))
TripwireDecimal = type("TripwireDecimal", (Decimal,), _untouchable(
    *_ARITHMETIC, "as_tuple", "__int__"))

THIRD = Fraction(1, 3) + Fraction(1, 3**100_000)   # in the float range, 158,497-bit parts
LONG_DECIMAL = "0." + "1" * 3000                     # 3,000 significant digits
HUGE = [("fraction", lambda: TripwireFraction(THIRD)),
        ("decimal", lambda: TripwireDecimal(LONG_DECIMAL))]
REFUSED = (rf"at most {MAX_EXACT_BITS} bits|at most {MAX_DECIMAL_DIGITS} significant digits|"
           rf"a Decimal of at most {MAX_ROW_DECIMAL_DIGITS} digits")  # a row to clip


def _releases(value):
    """Every release that takes exact values, fed ``value`` where data goes."""
    queries = [lambda d: d]
    return {
        "laplace": lambda: laplace_mechanism(value, 1.0, 1.0, rng=seeded(0)),
        "laplace list": lambda: laplace_mechanism([0.5, value], 1.0, 1.0, rng=seeded(0)),
        "gaussian": lambda: gaussian_mechanism(value, 1.0, 1.0, 1e-6, rng=seeded(0)),
        "gaussian list": lambda: gaussian_mechanism([value, 0.5], 1.0, 1.0, 1e-6,
                                                    rng=seeded(0)),
        "snapping": lambda: snapping_mechanism(value, 1.0, 1.0, 1000.0, rng=seeded(0)),
        "snapping list": lambda: snapping_mechanism([value], 1.0, 1.0, 1000.0, rng=seeded(0)),
        "above_threshold answer": lambda: above_threshold(queries, value, 0.0, 1.0,
                                                          rng=seeded(0)),
        "above_threshold threshold": lambda: above_threshold(queries, 0.5, value, 1.0,
                                                             rng=seeded(0)),
        "sparse answer": lambda: sparse(queries, value, 0.0, 1.0, 1, rng=seeded(0)),
        "range_queries answer": lambda: range_queries(queries, value, 1, 0.0, 1.0,
                                                      rng=seeded(0)),
        "above_threshold_runs answer": lambda: above_threshold_runs([0.5, value], 0.0, 1.0,
                                                                    runs=2, rng=seeded(0)),
        "above_threshold_runs threshold": lambda: above_threshold_runs([0.5], value, 1.0,
                                                                       runs=2, rng=seeded(0)),
        "auto_avg row": lambda: auto_avg([0.5, value], 1.0, max_rows=4, rng=seeded(0)),
        "choose_clip_bound row": lambda: choose_clip_bound([value, 0.5], 1.0, bounds=[1, 2],
                                                           max_rows=4, rng=seeded(0)),
    }


@pytest.mark.parametrize("release", list(_releases(None)))
@pytest.mark.parametrize(("kind", "make"), HUGE, ids=[h[0] for h in HUGE])
def test_exact_values_too_long_are_refused_from_their_size(release, kind, make):
    with pytest.raises(ValueError, match=REFUSED) as error:
        _releases(make())[release]()
    assert len(str(error.value)) < 600  # summarised, not printed


@pytest.mark.parametrize("release", ["above_threshold answer", "above_threshold threshold",
                                     "above_threshold_runs threshold"])
def test_ints_beyond_the_bit_limit_are_refused_where_any_magnitude_was_accepted(release):
    """The SVT functions take ints beyond the float range, up to MAX_EXACT_BITS bits."""
    with pytest.raises(ValueError, match=rf"at most {MAX_EXACT_BITS} bits"):
        _releases(3**100_000)[release]()
    assert as_fraction(2**MAX_EXACT_BITS - 1, "x") == 2**MAX_EXACT_BITS - 1


def test_rows_to_clip_keep_ints_of_any_size_and_refuse_long_fractions_by_size():
    """A row is clipped, so an int of any size is kept (it overflows to ±inf at once), but a
    Fraction or Decimal too long to round at a length-independent cost is refused."""
    assert auto_avg([0.5, 10**5000, -(3**100_000)], 1.0, max_rows=4, rng=seeded(0)) is not None
    longest = Fraction(2**MAX_EXACT_BITS - 1, 2**MAX_EXACT_BITS - 3)
    assert auto_avg([0.5, longest, Decimal("0." + "3" * MAX_DECIMAL_DIGITS)], 1.0, max_rows=4,
                    rng=seeded(0)) is not None


@pytest.mark.parametrize("clip", [auto_avg, choose_clip_bound])
def test_a_decimal_row_is_refused_exactly_as_documented(clip):
    """A Decimal row of MAX_ROW_DECIMAL_DIGITS (608) digits is taken, one more is refused,
    and the error says the rule it applies (breaker, round 7: rows of 361 to 608 digits
    were taken and the error for 609 said "at most 360 significant digits", so the
    documented domain was not the one enforced)."""
    grid = {"bounds": [0.5, 1.0, 2.0]}
    for digit in "39":
        rows = [0.5, 2.0, Decimal("0." + digit * MAX_ROW_DECIMAL_DIGITS)]
        clip(rows, 1.0, max_rows=4, rng=seeded(0), **grid)
        rows[2] = Decimal("0." + digit * (MAX_ROW_DECIMAL_DIGITS + 1))
        with pytest.raises(ValueError, match=rf"values\[2\] must be a Decimal of at most "
                                             rf"{MAX_ROW_DECIMAL_DIGITS} digits"):
            clip(rows, 1.0, max_rows=4, rng=seeded(0), **grid)


def test_the_largest_accepted_values_are_exact():
    """At the limits, values are still taken exactly (and every float's ratio fits)."""
    longest = Fraction(2**MAX_EXACT_BITS - 1, 2**MAX_EXACT_BITS - 3)
    assert check_real(longest, "x", exact=True) == longest
    assert check_real(5e-324, "x") == 5e-324
    assert Fraction(5e-324).denominator.bit_length() <= MAX_EXACT_BITS
    digits = Decimal("0." + "3" * MAX_DECIMAL_DIGITS)
    assert check_real(digits, "x", exact=True) == Fraction(digits)
    assert check_finite_array([digits, longest], "x", exact=True).tolist() == \
        [Fraction(digits), longest]
    for longer in ("0." + "3" * (MAX_DECIMAL_DIGITS + 1), "1" * (MAX_DECIMAL_DIGITS + 1) + "e-400",
                   "9." + "1" * 29 + "e-332"):  # 30 digits, the last worth 1e-361
        with pytest.raises(ValueError, match=f"at most {MAX_DECIMAL_DIGITS} significant"):
            check_real(Decimal(longer), "x", exact=True)
    with pytest.raises(ValueError, match=f"at most {MAX_EXACT_BITS} bits"):
        check_finite_array([0.5, Fraction(1, 3**800)], "x", exact=True)


def test_a_long_double_is_taken_exactly_whatever_its_ratio_length():
    """A long double's exact ratio is bounded by its format (at most 16,446 bits), so its
    cost is bounded too: it is never refused for its length, in a list as in an array."""
    if np.finfo(np.longdouble).nmant <= 52:
        pytest.skip("long double is float64 here")
    tiny = np.longdouble(2.0) ** -16000 * (1 + np.longdouble(2.0) ** -60)
    assert check_real(tiny, "x", exact=True) == Fraction(*tiny.as_integer_ratio())
    assert check_finite_array([tiny, 0.5], "x", exact=True).tolist() == \
        check_finite_array(np.array([tiny, 0.5]), "x", exact=True).tolist()


def test_a_huge_int_beyond_the_float_range_is_refused_from_its_bit_length():
    """``10**100000`` was converted to a Fraction and compared before its refusal."""
    class TripwireInt(int):
        locals().update(_untouchable("__abs__", "__gt__", "__lt__", "__float__", "__eq__",
                                     "__index__", "__repr__", "__str__"))

    with pytest.raises(ValueError, match="float64 range") as error:
        check_real(TripwireInt(10**100_000), "value", exact=True)
    assert "bits" in str(error.value)


#: An int on which anything but reading its size and sign fails the test (an int's ``<``
#: with 0 reads its sign: constant time).
TripwireRowInt = type("TripwireRowInt", (int,), _untouchable(
    *(name for name in _ARITHMETIC if name != "__lt__"), "__int__", "__index__", "__bool__"))


def test_a_row_beyond_the_float_range_is_rounded_from_its_bit_lengths():
    """Breaker, round 20 (F2): ``float()`` of a long int, a Fraction's ``float()`` and its
    comparisons take a time that grows with its length, and ``check_rows_to_clip`` (which
    takes ints of any size) called them on every row: one row ``2**N`` against ``2**N - 1``
    (N = 4e8) showed ε 1.38 in the time of ``choose_clip_bound``. Beyond the float range
    (or below half its smallest subnormal) a row is now rounded from its bit lengths and
    sign alone: these rows fail the test if anything else is read."""
    rows = [TripwireRowInt(1 << 5000), TripwireRowInt(-(1 << 5000)),
            TripwireFraction((1 << 5000) + 1, 3), TripwireFraction(-(1 << 5000), 7),
            TripwireFraction(1, 1 << 5000), TripwireFraction(-1, 1 << 5000), 3.0]
    assert check_rows_to_clip(rows, "values", 0.0, 10.0).tolist() == \
        [10.0, 0.0, 10.0, 0.0, 0.0, 0.0, 3.0]
    choose_clip_bound(rows, 1.0, bounds=[1, 10], max_rows=8, rng=seeded(0))
    auto_avg(rows, 1.0, max_rows=8, rng=seeded(0))


def _python_float(value):
    """Python's correctly rounded float of an int or Fraction (ties to even), ±inf where it
    overflows: the reference (cheap on these bounded values)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _edge_values():
    """Ints and Fractions at both ends of the float range, on each side of the thresholds
    where a row is rounded from its bit lengths (ints of 1024 bits and more; Fractions whose
    parts' bit lengths differ by 1026 to 1027 or by -1080 to -1081), and of the roundings:
    ``2**1024 - 2**970`` (the tie between the largest float and 2**1024, which rounds to
    inf), ``2**-1075`` (the tie between 0 and the smallest subnormal, which rounds to 0)."""
    top, tie = 2**1024, 2**1024 - 2**970
    ints = [tie + k for k in range(-300, 301)] + [top + k for k in range(-300, 301)]
    ints += [tie - 2**969 + k for k in (-1, 0, 1)] + [2**1025 - 1, 2**1025, 2**1023]
    fractions = []
    for numerator_bits in range(1, 40, 3):
        for k in range(-3, 4):
            numerator = 2**numerator_bits + k if 2**numerator_bits + k > 0 else 1
            for gap in range(1023, 1029):   # up: numerator << (gap + bits) over 2**bits
                big = numerator << (gap - numerator.bit_length() + 1)
                fractions += [Fraction(big + j, 3) for j in (-1, 0, 1)]
            for gap in range(-1083, -1072):  # down: numerator over a long denominator
                fractions += [Fraction(numerator, (1 << (numerator.bit_length() - gap - 1)) + j)
                              for j in (-1, 0, 1)]
    fractions += [Fraction(tie * 3 + k, 3) for k in (-1, 0, 1)]
    fractions += [Fraction(1, 2**1075) * m for m in (Fraction(1), Fraction(3, 2),
                                                        Fraction(1, 2), Fraction(2049, 2048))]
    values = ints + fractions
    return values + [-v for v in values]


def test_a_row_at_the_edges_of_the_float_range_rounds_as_python_does():
    """Exhaustively near both ends of the float range: the rounding from bit lengths and
    Python's exact ``float()`` agree on every value, sign included."""
    values = _edge_values()
    rows = check_rows_to_clip(values, "values", -math.inf, math.inf).tolist()
    expected = [_python_float(v) for v in values]
    wrong = [(v, r, e) for v, r, e in zip(values, rows, expected, strict=True)
             if r != e or math.copysign(1, r) != math.copysign(1, e)]
    assert not wrong, wrong[:3]
    assert math.inf in rows and -math.inf in rows and 0.0 in rows  # both ends reached
    assert max(r for r in rows if math.isfinite(r)) == np.finfo(np.float64).max


# -------------------------------------------------------------- F8: masks at any depth

MASKED = np.ma.masked_array([1.0, 2.0], mask=[False, True])


@pytest.mark.parametrize("values", [
    [[np.ma.masked]], [[1.0, np.ma.masked]], [[MASKED]], [[[MASKED]]], ([0.5], [MASKED]),
    [[0.5, 1.5], [2.5, np.ma.masked]],
], ids=["masked-2", "masked-2b", "array-2", "array-3", "tuple", "rows"])
@pytest.mark.parametrize("release", [
    lambda v: laplace_mechanism(v, 1.0, 1.0, rng=seeded(0)),
    lambda v: gaussian_mechanism(v, 1.0, 1.0, 1e-6, rng=seeded(0)),
    lambda v: snapping_mechanism(v, 1.0, 1.0, 1000.0, rng=seeded(0)),
    lambda v: randomized_response(v, 1.0, rng=seeded(0)),
    lambda v: check_finite_array(v, "value"),
], ids=["laplace", "gaussian", "snapping", "randomized_response", "check_finite_array"])
def test_masks_nested_at_any_depth_are_refused(values, release):
    with pytest.raises(TypeError, match=r"must not be a numpy\.ma\.MaskedArray"):
        release(values)


def test_the_scan_for_masks_reads_the_whole_nesting():
    """Breaker, round 20 (F1): the scan stopped at the first masked entry it met (from the
    end), so its time told where that entry was. Every row is now read to the end."""
    read = []

    class Row(list):
        def __iter__(self):
            read.append(self)
            return super().__iter__()

    rows = [Row([0.5]) for _ in range(5)] + [Row([np.ma.masked])]
    with pytest.raises(TypeError, match=r"must not be a numpy\.ma\.MaskedArray"):
        check_finite_array(rows, "values")
    assert set(map(id, read)) == set(map(id, rows))


# ------------------------------------------------------- F9: messages about huge values

@pytest.mark.parametrize("call", [
    lambda v: check_integer(v, "n", maximum=10),
    lambda v: check_integer(-v, "n", minimum=0),
    lambda v: check_real(v, "value"),
    lambda v: laplace_mechanism(v, 1.0, 1.0),
    lambda v: laplace_mechanism([0.5, v], 1.0, 1.0),
    lambda v: above_threshold_runs([0.5], v, 1.0, runs=2),
    lambda v: above_threshold([lambda d: d], v, 0.0, 1.0),
], ids=["integer-max", "integer-min", "real", "laplace", "laplace-list", "runs-threshold",
        "svt-answer"])
def test_a_message_summarises_an_int_of_more_than_4300_digits(call):
    with pytest.raises(ValueError) as error:
        call(10**5000)
    assert "int of 16610 bits" in str(error.value)


def test_describe_summarises_huge_numbers_and_long_containers():
    assert describe(10**5000) == "<int of 16610 bits: 2**16609 or more>"
    assert describe(-(10**5000)).startswith("<int of 16610 bits: -2**16609")
    assert describe(THIRD) == "<Fraction: 158495-bit numerator, 158497-bit denominator>"
    assert describe(Decimal(LONG_DECIMAL)).startswith("<Decimal of more than 360 digits")
    assert len(describe([10**5000] * 10**5)) <= 60
    assert describe(Fraction(1, 3)) == "Fraction(1, 3)"


@pytest.mark.parametrize("release", [
    lambda v: laplace_mechanism(v, 1.0, 1.0, rng=seeded(0)),
    lambda v: gaussian_mechanism(v, 1.0, 1.0, 1e-6, rng=seeded(0)),
], ids=["laplace", "gaussian"])
def test_a_release_formats_no_message_it_does_not_raise(monkeypatch, release):
    """The values are summarised for a message only when one is raised: formatting 1,000
    floats cost 18 ms a call, 35 times the release, and its time depends on the values."""
    import dpkit._exact
    import dpkit._samplers.grid
    import dpkit.gaussian
    import dpkit.laplace

    def forbidden(value):
        raise AssertionError("describe() called on a release that raises nothing")
    for module in (dpkit._exact, dpkit._samplers.grid, dpkit.laplace, dpkit.gaussian):
        monkeypatch.setattr(module, "describe", forbidden, raising=False)
    assert np.asarray(release(np.full(1000, 0.1))).shape == (1000,)
