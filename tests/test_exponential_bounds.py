"""Level 0 of the fast exponential sampler against exact rational values (issue 13).

Level 0 decides a draw from one table of powers rounded down (``_lower_table``), gathered
and summed block by block (``_table_level``), and the utilities are clamped and
rounded at random in one blocked pass (``_rounded_offsets``). Here every claim of those
proofs is checked exactly:

* each table entry is *the* double just below ``b**k`` (one ulp too high is unsafe for
  the lower bound, one ulp too low for the implied upper bound ``nextup(entry)``);
* the directed-rounding helpers are on the safe side of the exact result;
* the bracket ``[first, last]`` contains the exact outcome for uniform points next to
  every cumulative boundary, on ties, weights at both ends of the range, weights that
  underflow, many blocks (the block size is shrunk to force them) and ``n`` beyond one
  real block;
* the rounding of non-integer, negative, clamped and tied utilities is exact.

Every assertion is exact except one chi-square test (the sampler run with tiny blocks),
which rejects when its p-value is below 1e-7: a false-failure probability ≤ 1e-7 < 1e-6.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from scipy import stats

from dpkit import exponential
from dpkit._checks import check_finite_array
from dpkit._samplers import base2 as sampling
from dpkit.exponential import Eta
from dpkit.rng import seeded

BASES = [(1243, 11), (1, 1), (3, 2), (657, 31), (2**31 - 1, 32)]


def _near_limit() -> tuple[int, int]:
    """A base whose table is just shorter than the limit (η a little above 1074/2**16)."""
    return Eta.from_epsilon(0.0235).reduced()


def _is_rounded_down(entry: float, x: int, y: int, k: int) -> bool:
    """``entry ≤ (x/2**y)**k < nextup(entry)``, exactly (integers, no huge Fractions)."""
    power, scale = gmpy2.mpz(x) ** k, gmpy2.mpz(1) << (y * k)       # b**k = power / scale
    low_num, low_den = entry.as_integer_ratio()
    high_num, high_den = math.nextafter(entry, math.inf).as_integer_ratio()
    return low_num * scale <= power * low_den and power * high_den < high_num * scale


@pytest.mark.parametrize("x, y", [*BASES, _near_limit()])
def test_lower_table_is_exactly_the_power_rounded_down(x: int, y: int) -> None:
    table = sampling._lower_table(x, y)
    assert table is not None and table.size <= sampling._TABLE_LIMIT
    size = table.size
    rng = np.random.default_rng(size)
    ks = sorted({*range(min(size, 400)), *range(max(size - 200, 0), size),
                 *(int(v) for v in rng.integers(0, size, 100))})
    for k in ks:
        assert _is_rounded_down(float(table[k]), x, y, k), k
    assert table[-1] == 0.0 and table[-2] > 0.0        # K is the first underflowing power
    assert np.all(np.diff(table) <= 0)


def test_lower_table_refuses_bases_too_close_to_one() -> None:
    x, y = Eta.from_epsilon(0.02).reduced()            # K ≈ 74 000 > 2**16
    assert sampling._lower_table(x, y) is None
    assert sampling._lower_table(2**20 - 1, 20) is None  # η ≈ 1.4e-6: refused at once


@pytest.mark.parametrize("shift", [-1, 1])
def test_table_check_catches_one_ulp(shift: int) -> None:
    # The exact check above is sharp: an entry one ulp off either way fails it.
    x, y = 1243, 11
    table = sampling._lower_table(x, y)
    for k in (1, 7, 100, table.size - 2):
        wrong = math.nextafter(float(table[k]), shift * math.inf)
        assert not _is_rounded_down(wrong, x, y, k)


def test_directed_rounding_helpers_are_on_the_safe_side() -> None:
    rng = np.random.default_rng(3)
    pairs = [(float(a), float(b)) for a, b in rng.uniform(0, 1, (2000, 2))]
    pairs += [(2.0**-1070 * 3, 0.7), (5e-324, 0.5), (0.1, 3.0), (1 - 2.0**-53, 1 + 2.0**-52)]
    strict_below = 0
    for a, b in pairs:
        for exact, rounded in ((Fraction(a) * Fraction(b), a * b),
                               (Fraction(a) / Fraction(b), a / b),
                               (Fraction(a) - Fraction(b), a - b)):
            assert Fraction(sampling._rd(rounded)) <= exact <= Fraction(sampling._up(rounded))
            strict_below += Fraction(rounded) > exact
    assert strict_below > 100     # without the outward step, these would be unsafe


@pytest.mark.parametrize("n", [1, 2, 300, 65_536, 65_537, 10**7, 2**40])
def test_error_factors_cover_the_rounding_of_E_additions(n: int) -> None:
    # F·shrink ≤ L ≤ F·grow needs (1 + u)**E · shrink ≤ 1 ≤ (1 - u)**E · grow, u = 2**-53,
    # checked with 256-bit directed rounding (a rigorous check of the algebra).
    errors = n if n <= sampling.BLOCK else n + 2 * sampling.BLOCK
    shrink, grow = sampling._error_factors(n)
    assert Fraction(grow) - 1 == 1 - Fraction(shrink) == Fraction(errors, 2**52)
    with sampling.directed_context(256, gmpy2.RoundUp):
        assert (1 + gmpy2.mpfr(2) ** -53) ** errors * gmpy2.mpfr(shrink) <= 1
    with sampling.directed_context(256, gmpy2.RoundDown):
        assert (1 - gmpy2.mpfr(2) ** -53) ** errors * gmpy2.mpfr(grow) >= 1


@pytest.mark.parametrize("n", [1, 2, 300, 65_537, 10**7, 2**40])
def test_thresholds_satisfy_their_inequalities_exactly(n: int) -> None:
    # a·g·r + t ≤ A ≤ V·T and c·s ≥ B ≥ V·T, in rationals, for totals from the
    # subnormal range to n, and points across [0, 2**53).
    shrink, grow = (Fraction(f) for f in sampling._error_factors(n))
    ratio, tiny = 1 + Fraction(1, 2**52), n * Fraction(1, 2**1074)
    rng = np.random.default_rng(n % 1000)
    totals = [5e-324, 2.0**-1060 * 3, 2.0**-1022, 1.0, 1.5, float(n), 1e300,
              *(float(t) for t in rng.uniform(1, 2, 30))]
    points = [0, 1, 2**52, 2**53 - 1, *(int(p) for p in rng.integers(0, 2**53, 30))]
    for total in totals:
        for point in points:
            a, c = sampling._thresholds(total, n, point)
            v_low, v_high = Fraction(point, 2**53), Fraction(point + 1, 2**53)
            low_t = Fraction(total) * shrink                    # ≤ T
            high_t = Fraction(total) * grow * ratio + tiny      # ≥ T
            assert Fraction(a) * grow * ratio + tiny <= v_low * low_t, (total, point)
            assert Fraction(c) * shrink >= v_high * high_t, (total, point)


def _exact_cumulative(k: np.ndarray, x: int, y: int) -> list[int]:
    """Cumulative weights scaled to integers: ``C_j · 2**(y·max k)``."""
    top = int(k.max())
    powers = {int(v): x ** int(v) << (y * (top - int(v))) for v in np.unique(k)}
    total, sums = 0, []
    for v in k.tolist():
        total += powers[v]
        sums.append(total)
    return sums


def _check_bracket(k: np.ndarray, x: int, y: int, boundaries: list[int] | None = None,
                   random_points: int = 100) -> None:
    cumulative = _exact_cumulative(k, x, y)
    total = cumulative[-1]
    scaled = [c << 53 for c in cumulative]          # C_j·2**53, to compare with point·T
    chosen = range(len(cumulative)) if boundaries is None else boundaries
    points = {0, 2**53 - 1}
    for j in chosen:                # the points whose interval straddles or touches C_j/T
        centre = scaled[j] // total
        points.update(p for p in range(centre - 1, centre + 2) if 0 <= p < 2**53)
    points.update(int(p) for p in np.random.default_rng(k.size).integers(0, 2**53,
                                                                          random_points))
    for point in sorted(points):
        first, last = sampling._float_level(k, x, y, point)
        # the outcome #{j : C_j ≤ V·T} for V in [point, point + 1)·2**-53 lies in [low, high]
        low = bisect.bisect_right(scaled, point * total)
        high = bisect.bisect_left(scaled, (point + 1) * total)
        assert 0 <= first <= low <= high <= last <= k.size - 1, (point, first, last, low, high)


ADVERSARIAL = {
    "ties": np.zeros(300),
    "range ends": np.array([0, 2000] * 100),                  # 2000 ≥ K: underflowing
    "geometric": np.arange(300),
    "ends first": np.array([2000] * 150 + [0] + [1] * 149),
    "few levels": np.array([0, 1, 1, 2, 5, 0, 3, 9] * 30),
    "one survivor": np.array([3000] * 120 + [0] + [3000] * 120),
    "absorbed": np.array([0, 60, 61, 1, 2000, 0] * 40),
    # with b = 1/2: one weight 2**-1074 (the smallest double) and 99 of 2**-1075, whose
    # lower bounds are 0; only the n·2**-1074 term keeps the upper bound of T above T
    "subnormal": np.array([1074] + [1075] * 99),
}


@pytest.mark.parametrize("block", [4, 37, 1 << 16])
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_bracket_contains_the_exact_outcome(monkeypatch, name: str, block: int) -> None:
    monkeypatch.setattr(sampling, "BLOCK", block)
    k = ADVERSARIAL[name].astype(np.int64)
    for x, y in [(1243, 11), (3, 2), (1, 1)]:
        _check_bracket(k, x, y)


def test_bracket_for_bases_without_a_table() -> None:
    x, y = Eta.from_epsilon(0.02).reduced()              # the chunked-product level
    assert sampling._lower_table(x, y) is None
    _check_bracket(np.array([0, 5, 5, 900, 1, 100000, 0] * 20, dtype=np.int64), x, y)


def test_bracket_with_many_real_blocks() -> None:
    # n = 200 000 > 3 real blocks: ties everywhere, a few heavier outcomes, block ends
    # and random boundaries probed.
    n = 200_000
    k = np.full(n, 3, dtype=np.int64)
    k[[5, 65_535, 65_536, 131_071, 150_000, n - 1]] = [0, 1, 0, 2, 0, 1]
    probes = sorted({*range(0, n, 4099), 65_535, 65_536, 131_071, 131_072, 150_000,
                     n - 2, n - 1})
    _check_bracket(k, 1243, 11, probes, random_points=30)


@pytest.mark.parametrize("away", [False, True])
def test_rounding_is_exact_on_adversarial_utilities(monkeypatch, away) -> None:
    """Every clamped loss ``ũ``, integer or not, goes through one Bernoulli of probability
    exactly ``|ũ| - ⌊|ũ|⌋`` (0 for an integer), and comes out as ``sign(ũ)·(⌊|ũ|⌋ + b)``
    for its outcome ``b``: so ``ũ`` is rounded up with probability exactly ``ũ - ⌊ũ⌋``,
    negative or not (``-0.1`` and ``-2**-1074``, whose own parts are not doubles, too). On
    main only the non-integer losses went through a Bernoulli."""
    monkeypatch.setattr(exponential, "_ROUNDING_BLOCK", 3)
    low, high = -3.5, 2.0**52
    values = np.array([-0.0, 0.0, -3.5, -7.25, -3.25, 2.0**52, 2.0**60, 1.5, -1.5,
                       2.0**52 - 0.5, 4.0, 4.0, 0.75, -2.0**-1074, -0.1, -2.75])
    chances: list[float] = []

    def record(fractions: np.ndarray, rng: object) -> np.ndarray:
        chances.extend(fractions.tolist())
        return (fractions > 0) & away               # a Bernoulli(0) never comes up

    monkeypatch.setattr(sampling, "bernoulli_dyadic", record)
    offsets = exponential._rounded_offsets(values, low, high, seeded(0))
    assert len(chances) == values.size
    expected = []
    for value, chance in zip(values.tolist(), chances, strict=True):
        clamped = min(max(Fraction(value), Fraction(low)), Fraction(high))
        magnitude = abs(clamped)
        assert Fraction(chance) == magnitude - math.floor(magnitude)        # exact
        part = clamped - math.floor(clamped)
        if part:             # P(rounded up) = P(b) for ũ > 0, P(not b) for ũ < 0
            assert (Fraction(chance) if clamped > 0 else 1 - Fraction(chance)) == part
        up = away and bool(part)
        rounded = math.floor(magnitude) + up
        expected.append((rounded if clamped >= 0 else -rounded) - math.floor(low))
    assert offsets.tolist() == [e - min(expected) for e in expected]


@pytest.mark.parametrize("values, low, high", [
    ([0.5, 1.0, 1.0, 7.0], 0.0, 8.0),         # the only value at the lowest floor is 0.5
    ([2.5, 2.5, 3.0], 0.0, 4.0),
    ([1.25, -9.0, 1.0], 1.0, 3.0),            # -9 clamps to the lower end
])
def test_rounded_offsets_are_shifted_to_minimum_zero(monkeypatch, values, low, high) -> None:
    monkeypatch.setattr(exponential, "_ROUNDING_BLOCK", 2)
    array = np.array(values)
    clamped = np.clip(array, low, high)
    floors = np.floor(clamped).astype(np.int64)
    fractional = clamped != floors
    seen = set()
    for seed in range(40):
        offsets = exponential._rounded_offsets(array, low, high, seeded(seed))
        assert offsets.min() == 0
        moved = offsets - floors                    # the shift, plus 1 where rounded up
        shift = moved[~fractional]
        assert np.all(shift == shift[0])
        assert set(moved[fractional].tolist()) <= {shift[0], shift[0] + 1}
        seen.add(tuple(offsets.tolist()))
    assert len(seen) > 1                            # the rounding is random


def test_probabilities_use_the_exact_part_of_a_negative_utility() -> None:
    # The double -0.1 lies in [-1, 0): it is rounded down to -1 with probability exactly
    # Fraction(0.1) and up to 0 otherwise; its fractional part 1 - Fraction(0.1) is not a
    # double, so a part computed in floating point would be off.
    tenth = Fraction(0.1)
    assert Fraction(1.0 - 0.1) != 1 - tenth
    probs = exponential.probabilities([-0.1, 0.0], Eta(1, 1), utility_min=-1, utility_max=0)
    # rounded down: weights 2**1 : 2**0, so P(0) = 2/3; rounded up: 1/2
    assert probs[0] == tenth * Fraction(2, 3) + (1 - tenth) * Fraction(1, 2)


def test_sampler_with_tiny_blocks_samples_the_exact_distribution(monkeypatch) -> None:
    # Blocks of 3 outcomes: most draws go through several blocks and block-end decisions.
    monkeypatch.setattr(sampling, "BLOCK", 3)
    k = np.array([0, 1, 1, 2, 5, 0, 3, 9, 0, 2], dtype=np.int64)
    weights = [Fraction(3, 4) ** int(v) for v in k]
    draws = 20_000
    rng = seeded(13)
    samples = [sampling.fast_sample(k, 3, 2, rng, precision=200) for _ in range(draws)]
    expected = np.array([float(w / sum(weights)) for w in weights]) * draws
    assert expected.min() >= 5
    counts = np.bincount(samples, minlength=k.size)
    assert stats.chisquare(counts, expected).pvalue > 1e-7


@pytest.mark.parametrize("high, dtype", [(2.0**31 - 1, np.int32), (2.0**31 - 0.5, np.int64),
                                         (2.0**31, np.int64)])
def test_offsets_are_narrow_only_when_every_rounded_offset_fits(high, dtype) -> None:
    # The offsets are int32 when the public span ⌈high⌉ - ⌊low⌋ is below 2**31; the
    # largest rounded offset then is at most 2**31 - 1, the int32 maximum.
    values = np.array([high - 0.5, high, 0.0, 2.0**40])       # 2**40 clamps to high
    largest = set()
    for seed in range(12):
        offsets = exponential._rounded_offsets(values, 0.0, high, seeded(seed)).tolist()
        assert exponential._rounded_offsets(values, 0.0, high, seeded(seed)).dtype == dtype
        for index, value in ((0, high - 0.5), (1, high), (3, high)):
            assert offsets[index] in (math.floor(value), math.ceil(value))
        assert offsets[2] == 0
        largest.add(max(offsets))
    assert max(largest) == math.ceil(high)      # reached: 2**31 needs int64


def test_finite_float64_utilities_are_read_in_place_and_others_validated(monkeypatch) -> None:
    monkeypatch.setattr(sampling, "BLOCK", 4)
    monkeypatch.setattr(exponential, "_ROUNDING_BLOCK", 4)
    values = np.arange(10.0)
    assert exponential._utilities(values) is values                      # no copy
    strided = np.arange(20.0)[::2]
    assert exponential._utilities(strided) is strided
    assert exponential._rounded_offsets(strided, 0.0, 20.0, seeded(0)).tolist() == \
        list(range(0, 20, 2))
    for bad in (np.inf, -np.inf, np.nan):
        broken = values.copy()
        broken[9] = bad                         # in the last block
        with pytest.raises(ValueError, match="utilities") as caught:
            exponential._utilities(broken)
        with pytest.raises(ValueError) as expected:
            check_finite_array(broken, "utilities", ndim=1)
        assert str(caught.value) == str(expected.value)
    for other in (values.astype(np.float32), values.astype(">f8")):
        assert exponential._utilities(other) is not other   # the general path
    with pytest.raises(TypeError, match=r"must not be a numpy\.ma\.MaskedArray"):
        exponential._utilities(np.ma.masked_array(values))  # a mask is never ignored
    with pytest.raises(ValueError, match="1 dimension"):
        exponential._utilities(values.reshape(2, 5))
