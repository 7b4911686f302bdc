"""The vectorised grid arithmetic (issue 13) gives bit-for-bit the exact results.

``to_grid``, ``add_units`` and ``from_grid`` have a vectorised ``int64``/``float64`` path
and an exact Python-int path. Every test here compares the vectorised path with an
independent exact reference written with :class:`fractions.Fraction` (``round`` of a
Fraction rounds half to even; ``float`` of a Fraction is correctly rounded), on adversarial
inputs (ties, ``2**53``, ``2**61``, ``2**62``, ``2**63`` grid units, signed zeros,
subnormals, extreme grid exponents) and on random inputs drawn with fixed seeds. The
mechanisms are checked end to end against the same reference with the noise they drew.
No test here is statistical: each comparison is deterministic.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from dpkit import _checks
from dpkit._samplers import grid
from dpkit._samplers.grid import _IN_PLACE_CHUNK, add_units, from_grid, to_grid
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.gaussian import _noise_parameters, gaussian_mechanism
from dpkit.laplace import laplace_grid, laplace_mechanism, sample_releases
from dpkit.rng import seeded

TINY = 5e-324                # smallest subnormal
MIN_NORMAL = 2.0**-1022
MAX = 1.7976931348623157e308


def _exact(value):
    """A real number (NumPy scalars included) as an exact Fraction."""
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, np.floating):
        return Fraction(*value.as_integer_ratio())
    return Fraction(value)


def _units(value, k):
    """Exact ``round(value / 2**k)``, ties to even."""
    return round(_exact(value) / Fraction(2) ** k)


def _float(units, k):
    """Nearest float to ``units · 2**k`` (±inf beyond the range)."""
    try:
        return float(Fraction(units) * Fraction(2) ** k)
    except OverflowError:
        return math.inf if units > 0 else -math.inf


def _int_array(ints):
    """What ``to_grid``/``add_units`` return: int64 if every value is below 2**62, else objects."""
    if all(abs(v) < 2**62 for v in ints):
        return np.array(ints, dtype=np.int64)
    out = np.empty(len(ints), dtype=object)
    out[:] = ints
    return out


def _same_ints(got, ints):
    expected = _int_array(ints)
    assert got.dtype == expected.dtype
    assert [int(v) for v in got.ravel()] == ints


def _same_floats(got, floats):
    """Bit-for-bit equality, so ``-0.0`` and ``0.0`` differ."""
    assert got.dtype == np.float64
    assert got.ravel().view(np.uint64).tolist() == \
        np.array(floats, dtype=np.float64).view(np.uint64).tolist()


def _ties(k):
    """Values at and next to the half-way points, on both sides of zero."""
    out = []
    for m in (0, 1, 2, 3, 2**20 + 1, 2**52 - 1, 2**52, 2**52 + 1):
        for delta in (Fraction(-1, 2), Fraction(1, 2)):
            exact = (m + delta) * Fraction(2) ** k
            value = _float(exact, 0)
            if Fraction(value) == exact if math.isfinite(value) else False:
                out += [value, -value, math.nextafter(value, math.inf),
                        math.nextafter(value, -math.inf)]
    return [v for v in out if math.isfinite(v)]


def _edges(k):
    """Grid values near 2**53, 2**61, 2**62 and 2**63 units, zeros, tiny and huge floats."""
    out = [0.0, -0.0, TINY, -TINY, MIN_NORMAL, -MIN_NORMAL, MAX, -MAX, 1.0, -1.0, 0.1]
    for e in (53, 61, 62, 63):
        centre = 2.0**e
        out += [centre, -centre, math.nextafter(centre, 0), math.nextafter(centre, math.inf),
                -math.nextafter(centre, 0)]
    return [_ldexp(v, k) for v in out] + out


def _ldexp(value, k):
    """``value · 2**k`` where that is a float, else ``value``."""
    try:
        return math.ldexp(value, k)
    except OverflowError:
        return value


EXPONENTS = [-1100, -1075, -1074, -1073, -1022, -1000, -60, -20, -1, 0, 1, 20, 60, 1000,
             1022, 1023, 1024, 1100, 3000, -3000, 10**6, -10**6]


@pytest.mark.parametrize("k", EXPONENTS)
def test_to_grid_vectorised_equals_exact_rounding(k):
    values = [v for v in _ties(k) + _edges(k) if math.isfinite(v)]
    for v in values:  # one by one: every value takes the vectorised path
        _same_ints(to_grid(np.array([v]), k, exact=False), [_units(v, k)])
    # All at once (more than 64 values: the default vectorised path), in and out of range.
    within = [v for v in values if abs(_units(v, k)) < 2**62]
    _same_ints(to_grid(np.array(within * 3), k), [_units(v, k) for v in within] * 3)
    _same_ints(to_grid(np.array(values * 3), k), [_units(v, k) for v in values] * 3)


@pytest.mark.parametrize("k", EXPONENTS)
def test_from_grid_vectorised_equals_correct_rounding(k):
    ints = [0, 1, -1, 3, 2**53 - 1, 2**53, 2**53 + 1, 2**53 + 2, 2**53 + 3, 2**54 + 6,
            2**61 - 1, 2**61 + 1, 2**62 + 2**9, 2**62 + 2**9 + 1, 2**63 - 1, -2**63,
            2**63 - 2**10, 2**63 - 2**9, -(2**62 + 3 * 2**9)]
    ints += [-v for v in ints if v != -2**63]
    units = np.array(ints, dtype=np.int64)
    expected = [_float(u, k) for u in ints]
    for u, f in zip(ints, expected, strict=True):
        _same_floats(from_grid(np.array([u], dtype=np.int64), k, exact=False), [f])
    _same_floats(from_grid(np.tile(units, 5), k), expected * 5)
    _same_floats(from_grid(np.tile(units, 5), k, overwrite=True), expected * 5)


def test_the_same_memory_is_converted_exactly_across_chunks():
    """In-place conversion runs by chunks: sizes around the chunk length, 2-d, reversed."""
    rng = np.random.default_rng(13)
    chunk = _IN_PLACE_CHUNK
    for n in (65, chunk - 1, chunk, chunk + 1, 3 * chunk + 17):
        values = rng.normal(0, 1e6, n)
        k = -30
        ints = [_units(v, k) for v in values.tolist()]
        _same_ints(to_grid(values, k), ints)
        _same_ints(to_grid(values[::-1], k), ints[::-1])
        units = to_grid(values.reshape(-1, 1), k)
        assert units.shape == (n, 1)
        _same_floats(from_grid(units, k, overwrite=True), [_float(u, k) for u in ints])
        units = to_grid(values, k)
        _same_floats(from_grid(units[::-1], k, overwrite=True),
                     [_float(u, k) for u in ints[::-1]])


def _random_floats(rng, n):
    """Finite floats with uniformly random bit patterns: every exponent, subnormals, signs."""
    bits = rng.integers(0, 2**64, size=n, dtype=np.uint64).view(np.float64)
    return bits[np.isfinite(bits)]


def test_random_floats_and_exponents_match_the_exact_reference():
    rng = np.random.default_rng(20261123)
    for _ in range(40):
        values = _random_floats(rng, 300)
        k = int(rng.integers(-1200, 1200))
        _same_ints(to_grid(values, k), [_units(v, k) for v in values.tolist()])
        # Values of moderate magnitude: the whole array stays on the int64 path.
        scaled = rng.uniform(-2.0**60, 2.0**60, 300) * 2.0**k if abs(k) < 900 else values
        _same_ints(to_grid(scaled, k), [_units(v, k) for v in scaled.tolist()])
        units = rng.integers(-2**63, 2**63 - 1, size=300, dtype=np.int64, endpoint=True)
        units[:100] >>= rng.integers(0, 63, 100)  # every magnitude
        kf = int(rng.integers(-1100, 1100))
        _same_floats(from_grid(units, kf), [_float(int(u), kf) for u in units])


def test_add_to_floats_by_chunks_equals_the_exact_reference():
    """``add_to_floats`` runs by chunks of ``_FLOAT_CHUNK`` values, optionally writing into
    the noise's memory: every chunk, and a chunk whose noise is beyond ``2**53`` (computed on
    Python ints), gives the exact reference bit for bit."""
    rng = np.random.default_rng(2114)
    chunk = grid._FLOAT_CHUNK
    low, high = grid.FLOAT_K_RANGE
    for n in (chunk - 1, chunk + 1, 2 * chunk + 17):
        k = int(rng.integers(low, high, endpoint=True))
        values = _random_floats(rng, n)                 # every magnitude, subnormals, signs
        near = rng.uniform(-2.0**40, 2.0**40, values.size) * 2.0**k  # near the grid
        values = np.where(rng.random(values.size) < 0.5, near, values)
        noise = rng.integers(-2**52, 2**52, values.size) >> rng.integers(0, 53, values.size)
        noise[min(chunk + 5, noise.size - 1)] = 2**60   # beyond the reach, in the last chunk
        want = [_float(_units(v, k) + int(e), k) for v, e in zip(values.tolist(), noise,
                                                                 strict=True)]
        kept = noise.copy()
        _same_floats(grid.add_to_floats(values, k, noise), want)
        assert np.array_equal(noise, kept)              # not overwritten unless asked
        released = grid.add_to_floats(values, k, noise, overwrite=True)
        _same_floats(released, want)
        assert np.shares_memory(released, noise)


def test_add_units_checks_the_range_without_overflow():
    """``-2**63`` has no int64 absolute value: the sum must still be exact."""
    cases = [([-2**63] + [0] * 99, [1] * 100), ([2**61 - 1] * 100, [2**61 - 1] * 100),
             ([2**61] * 100, [5] * 100), ([-(2**61)] * 100, [-1] * 100),
             ([2**62 - 1] * 100, [2**62 - 1] * 100), ([3] * 100, [-(2**63)] * 100)]
    for a, b in cases:
        total = [x + y for x, y in zip(a, b, strict=True)]
        _same_ints(add_units(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)), total)
        _same_ints(add_units(np.array(a, dtype=np.int64), np.array(b, dtype=np.int64),
                             overwrite=True), total)


def test_overwrite_reuses_the_operand_and_exact_paths_do_not():
    a = np.arange(100, dtype=np.int64)
    total = add_units(a, np.ones(100, dtype=np.int64), overwrite=True)
    assert total is a and a[0] == 1
    released = from_grid(a, -1, overwrite=True)
    assert np.shares_memory(released, a) and released[1] == 1.0
    small = np.arange(3, dtype=np.int64)  # exact path (size <= 64): new Python-int arrays
    assert add_units(small, small, overwrite=True).dtype == object
    assert small.tolist() == [0, 1, 2]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.float32, np.float16,
                                   np.longdouble])
def test_to_grid_of_other_dtypes_is_exact(dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    values = [0, 1, 2, 3, 5, 7, 100]
    if info is not None:
        values += [int(info.max), int(info.max) - 1, int(info.min)]
    array = np.array(values * 20, dtype=dtype)
    if dtype is np.longdouble:
        array[::7] = np.longdouble(1) / 3
    exact = [Fraction(*v.as_integer_ratio()) if dtype is np.longdouble else Fraction(int(v))
             if info is not None else Fraction(float(v)) for v in array.tolist()]
    for k in (-3, 0, 2):
        _same_ints(to_grid(array, k), [_units(v, k) for v in exact])


# -- input checks: the typed (vectorised) path equals the list path, element by element ---

@pytest.mark.parametrize("array", [
    np.array([0.0, -0.0, TINY, MAX, -MAX, 0.1] * 20),
    np.array([2**53, -(2**53), 2**53 + 1, 2**63 - 1, -2**63, 0] * 20, dtype=np.int64),
    np.array([2**53, 2**53 + 1, 2**64 - 1, 0] * 20, dtype=np.uint64),
    np.array([0.1, 3.5, 1e-45, 3e38] * 20, dtype=np.float32),
    np.array([np.longdouble(1) / 3, 0.5, np.longdouble(2)**-16000] * 20),
    np.array([[2**60 + 1, 1], [2, 3]], dtype=np.int64),
])
def test_typed_arrays_are_converted_as_their_elements(array):
    typed = _checks.check_finite_array(array, "value", exact=True)
    listed = _checks.check_finite_array(array.tolist(), "value", exact=True)
    assert typed.dtype == listed.dtype and typed.shape == listed.shape
    assert [Fraction(v) for v in typed.ravel()] == [Fraction(v) for v in listed.ravel()]
    assert typed.ravel().tolist() == listed.ravel().tolist()  # signed zeros included
    if typed.dtype == np.float64:
        assert not np.shares_memory(typed, array)
    if array.dtype == np.float64:
        assert _checks.check_finite_array(array, "value", exact=True, copy=False) is array


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [0, 77, 198])
def test_the_first_nonfinite_element_is_named(dtype, bad, where):
    array = np.ones(200, dtype=dtype)
    array[where] = bad
    with pytest.raises(ValueError, match=rf"got {bad!r} at index {where}$"):
        _checks.check_finite_array(array, "value", exact=True, copy=False)
    array[-1] = np.nan  # a later one is not the one reported
    with pytest.raises(ValueError, match=rf"got {bad!r} at index {where}$"):
        _checks.check_finite_array(array, "value", exact=True)


# -- end to end: a release is the nearest float to the exact grid value plus its noise ----

def _laplace_reference(values, sensitivity, epsilon, seed):
    grid = laplace_grid(sensitivity, epsilon, max(1, len(values)))
    k = grid.exponent
    noise = discrete_laplace(grid.scale_units, seeded(seed), size=len(values))
    return [_float(_units(v, k) + int(z), k) for v, z in zip(values, noise, strict=True)]


@pytest.mark.parametrize("seed", [0, 1])
def test_laplace_mechanism_equals_the_exact_reference(seed):
    rng = np.random.default_rng(seed)
    values = np.concatenate([rng.normal(0, 1e3, 2000), _edges(-20)[:10],
                             [(m + 0.5) * 2.0**-20 for m in range(50)]])
    values = values[np.abs(values) < 1e300]
    released = laplace_mechanism(values, 1.0, 0.5, rng=seeded(seed))
    _same_floats(released, _laplace_reference(values.tolist(), 1.0, 0.5, seed))
    listed = laplace_mechanism(values.tolist(), 1.0, 0.5, rng=seeded(seed))
    _same_floats(listed, _laplace_reference(values.tolist(), 1.0, 0.5, seed))
    assert values.tolist() == values.copy().tolist()  # the input was not modified


def test_mixed_lists_and_typed_arrays_equal_the_exact_reference():
    """Values float64 cannot hold (Fractions, big ints, long doubles) stay exact end to end."""
    floats = np.random.default_rng(4).normal(0, 10, 100).tolist()
    mixed = [*floats, Fraction(1, 3), 2**54 + 3, -(2**60) - 1, np.int64(2**53 + 1),
             np.longdouble(1) / 3, Fraction(-7, 2**21)]
    _same_floats(laplace_mechanism(mixed, 1.0, 0.5, rng=seeded(3)),
                 _laplace_reference(mixed, 1.0, 0.5, 3))
    for array in (np.array([2**54 + 3, -5, 2**62 + 1] * 40, dtype=np.int64),
                  np.array([2**64 - 1, 3] * 60, dtype=np.uint64),
                  np.array([0.1, -2.5, 1e30] * 40, dtype=np.float32)):
        values = [Fraction(int(v)) if array.dtype.kind in "iu" else Fraction(float(v))
                  for v in array.tolist()]
        _same_floats(laplace_mechanism(array, 1.0, 0.5, rng=seeded(8)),
                     _laplace_reference(values, 1.0, 0.5, 8))


def test_sample_releases_equals_the_exact_reference():
    value = (2**20 + 0.5) * 2.0**-20
    grid = laplace_grid(1.0, 0.5)
    noise = discrete_laplace(grid.scale_units, seeded(5), size=500)
    expected = [_float(_units(value, grid.exponent) + int(z), grid.exponent) for z in noise]
    _same_floats(sample_releases(value, 1.0, 0.5, 500, rng=seeded(5)), expected)


def test_gaussian_mechanism_equals_the_exact_reference():
    values = np.random.default_rng(3).normal(0, 1e4, (40, 50))
    k, sigma2, _ = _noise_parameters(1.0, 1.0, 1e-6, values.size, "analytic")
    noise = discrete_gaussian(sigma2, seeded(9), size=values.shape)
    expected = [_float(_units(v, k) + int(z), k)
                for v, z in zip(values.ravel().tolist(), noise.ravel(), strict=True)]
    released = gaussian_mechanism(values, 1.0, 1.0, 1e-6, rng=seeded(9))
    assert released.shape == values.shape
    _same_floats(released, expected)


@pytest.mark.parametrize("module", ["bernoulli", "bits", "base2", "envelope", "exact",
                                    "fixed_cost", "grid", "noise"])
def test_no_module_level_name_of_a_sampler_module_is_bound_twice(module):
    """Two helpers once edited the same sampler module: a second ``_CHUNK = ...`` at the end
    of the file silently replaced the sampler's constant of the same name (the samplers
    stayed exact but ran at half speed). Every top-level name must be bound once."""
    import ast
    import collections
    import importlib
    import inspect

    tree = ast.parse(inspect.getsource(importlib.import_module(f"dpkit._samplers.{module}")))
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names += [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
    twice = [name for name, count in collections.Counter(names).items() if count > 1]
    assert twice == []


def test_adding_noise_to_floats_selects_without_a_branch_per_value(monkeypatch):
    """The cost of adding the noise must not depend on the pattern of the values: NumPy's
    ``where`` branches per element, so values alternating either side of its thresholds
    (zero below half a grid step; the value itself above 2**52 steps) cost more than values
    all on one side (breaker review 19: +66 µs per 16,385 values, ε ≥ 1.1 certified from the
    work's time). ``add_to_floats`` now selects by bit masks; here ``where`` is refused and
    the result still equals the exact reference on such a pattern. Deterministic."""
    k = -20
    values = np.array([0.75 * 2.0**k, 0.25 * 2.0**k, 2.0 ** (k + 52),
                       2.0 ** (k + 52) - 2.0**k, -0.25 * 2.0**k, 3.5] * 700)
    noise = np.arange(values.size, dtype=np.int64) - 2000
    expected = grid.add_to_floats(values, k, noise.copy())

    def refuse(*args, **kwargs):
        raise AssertionError("np.where in add_to_floats: a branch per value")

    monkeypatch.setattr(grid.np, "where", refuse)
    got = grid.add_to_floats(values, k, noise.copy())
    assert np.array_equal(got.view(np.int64), expected.view(np.int64))
    exact = from_grid(add_units(to_grid(values, k, exact=True), noise.astype(object),
                                exact=True), k)
    assert np.array_equal(got, np.asarray(exact, dtype=np.float64))


@pytest.mark.parametrize("reach", [Fraction(0), Fraction(1, 3), Fraction(2**970),
                                   grid.FLOAT_MAX - Fraction(5, 7), grid.FLOAT_MAX + 1])
def test_the_float_range_check_compares_floats_and_refuses_exactly(reach):
    """``check_float_range`` compares the largest |value| with a float threshold from the
    public reach (the exact comparison on a subnormal value cost 3 µs more: breaker review
    19), and refuses exactly the values the exact comparison refuses: the threshold and
    the next float up either side of ``largest + reach <= FLOAT_MAX``. Deterministic."""
    allowed = grid._largest_allowed(reach)
    span = grid.release_range(0, reach)
    words = lambda: {"value": 0, "noise": "n", "bound": "b"}  # noqa: E731
    if allowed >= 0:
        assert Fraction(allowed) + reach <= grid.FLOAT_MAX
        grid.check_float_range(np.array([-allowed, 5e-324]), span, words)
        grid.check_float_range(-allowed, span, words)
    above = math.nextafter(allowed, math.inf) if allowed >= 0 else 0.0   # none allowed
    if math.isfinite(above):
        assert Fraction(above) + reach > grid.FLOAT_MAX
        with pytest.raises(ValueError, match="too close to the float range"):
            grid.check_float_range(np.array([0.0, above]), span, words)
        with pytest.raises(ValueError, match="too close to the float range"):
            grid.check_float_range(above, span, words)
