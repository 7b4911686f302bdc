"""Exact samplers behind :func:`dpkit.exponential.base2_exponential_mechanism` (private).

Every sampler here draws an index ``i`` with probability exactly ``w_i / Σ_j w_j`` where
``w_i = b**k_i``, ``b = X / 2**Y`` (``X`` odd, ``0 < X < 2**Y``) and ``k_i ≥ 0`` are integers.
Two strategies are implemented.

Full precision (:func:`full_precision_sample`)
    Ilvento (2020), Algorithms 2–4: all weights and their sum computed exactly in gmpy2
    (MPFR) at a precision fixed in advance, with MPFR's inexact flag trapped, then a
    division-free normalised draw: a uniform point ``t`` on a dyadic grid in ``[0, 2**K)``
    (``2**K`` the first power of two ``≥ Σ w``) is redrawn until ``t < Σ w``, and the
    outcome whose cumulative interval contains ``t`` is returned. For ``k_i = i`` the sum has
    ``Θ(n)`` bits, so one draw costs ``Θ(n²)`` bit operations.

Interval refinement (:func:`fast_sample`)
    The same draw — a lazily generated uniform ``V`` in ``[0, 1)``, outcome ``i`` iff
    ``C_{i-1} ≤ V·T < C_i`` for the cumulative sums ``C`` and total ``T`` — decided with
    *rigorous bounds* instead of exact values. Level 0 bounds every weight below by a
    double read from a table of powers correctly rounded down (the next double up bounds
    it above; bases too close to 1 for a table use products of table entries with
    outward rounding through :func:`numpy.nextafter`), sums those doubles block by block
    so that the work stays in cache, and bounds the sums by the classic error bound of
    floating-point summation; it decides the outcome unless ``V`` lands within about
    ``n·2**-52`` (relative) of a cumulative boundary. Only then are more bits of ``V``
    drawn (320 in all) and level 1 sums 96-bit fixed-point lower bounds of the weights
    exactly (:mod:`~dpkit._samplers.fixed_point`), which leaves a draw undecided with
    probability at most :func:`~dpkit._samplers.fixed_point.fallback_bound` (about
    ``8n²·2**-96``, from ``n`` alone); only then are the bounds recomputed with MPFR
    directed rounding at 256, 1024, … bits, and finally exactly (the full-precision
    arithmetic above, inexact flag trapped). Because a level only ever *narrows* the set of
    indices consistent with the same ``V``, the output is the exact distribution whichever
    level decides; the levels differ only in time. The tables are built from public
    parameters before a release's clock starts (:func:`power_tables`).

Random binary search (:func:`random_binary_search_sample`)
    Ilvento (2020), Algorithm 3: the weights as exact integers, a dummy outcome ``⊥`` that
    pads the total to the next power of two ``2**m``, and a uniform point in ``[0, 2**m)``
    whose bits are drawn one at a time, most significant first. After ``j`` bits the point
    is known to lie in a dyadic interval of width ``2**(m - j)``; the draw stops as soon as
    that interval lies inside one outcome's cumulative interval (return it) or inside
    ``⊥``'s (start again). At most ``m`` bits per round, usually far fewer.

Bounded rejection (:func:`get_random_value`)
    Ilvento (2020), Algorithm 4: the uniform point below a total, by rejection with a fixed
    number of rounds, so the number of draws does not depend on the data.

All consume random *bits* only (:meth:`dpkit.rng.RandomSource.bits`,
:meth:`~dpkit.rng.RandomSource.randbelow`); :class:`CountingSource` counts them.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import gmpy2
import numpy as np

from dpkit._samplers.bits import bernoulli_dyadic
from dpkit._samplers.fixed_point import V_BITS, fixed_point_level, fixed_point_table
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource

__all__ = [
    "CountingSource",
    "InexactArithmeticError",
    "PowerTables",
    "bernoulli_dyadic",
    "exact_context",
    "fast_sample",
    "full_precision_sample",
    "get_random_value",
    "handover_probability",
    "integer_weights",
    "power_tables",
    "random_binary_search_sample",
    "search_round",
]

_CHUNK_BITS = 10            # level-0 power tables cover 10 bits of the exponent each
_CHUNK = 1 << _CHUNK_BITS
_MP_PRECISIONS = (256, 1024, 4096)   # intermediate MPFR levels of the fast sampler
_V_SLACK = 64               # extra bits of V drawn beyond the working precision
BLOCK = 1 << 16            # level 0 gathers and sums the weights this many at a time
_TABLE_LIMIT = 1 << 16      # longest direct table of powers (bases with η ≳ 0.017)


class InexactArithmeticError(ArithmeticError):
    """An operation of the exact base-2 exponential mechanism would have been rounded.

    Raised instead of returning a sample whose computation was not exact: the precision
    was too small for the utility range and number of outcomes, or the numbers involved
    exceed the limits of the arithmetic.
    """


# --------------------------------------------------------------------------------------
# gmpy2 contexts


def exact_context(precision: int) -> Any:
    """A gmpy2 context of ``precision`` bits in which any rounding raises an exception."""
    return gmpy2.context(precision=precision, round=gmpy2.RoundToNearest,
                         emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max(),
                         trap_inexact=True, trap_underflow=True, trap_overflow=True,
                         trap_invalid=True, trap_erange=True, trap_divzero=True)


def directed_context(precision: int, rounding: Any) -> Any:
    """A gmpy2 context of ``precision`` bits rounding every result in one direction."""
    return gmpy2.context(precision=precision, round=rounding,
                         emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())


def exact_base(x: int, y: int) -> Any:
    """``x / 2**y`` as an exact MPFR number (carrying as many bits as ``x`` needs)."""
    with exact_context(max(x.bit_length(), 2)):
        return gmpy2.div_2exp(gmpy2.mpfr(x), y)


# --------------------------------------------------------------------------------------
# Sums of weights grouped by exponent: Σ_i b**k_i = Σ_levels count · b**level


def _levels(k: np.ndarray) -> tuple[list[int], list[int]]:
    """The distinct exponents of ``k`` (ascending) and how often each occurs."""
    if k.size == 0:
        return [], []
    levels, counts = np.unique(k, return_counts=True)
    return [int(v) for v in levels], [int(c) for c in counts]


def _level_weights(base: Any, levels: Iterable[int]) -> Iterable[Any]:
    """Yield ``base**level`` for ascending ``levels``, by multiplying by ``base**gap``.

    Runs in the caller's gmpy2 context: exact (inexact flag trapped) or directed.
    """
    weight, previous = gmpy2.mpfr(1), 0
    for level in levels:
        gap = level - previous
        if gap:
            weight = weight * (base if gap == 1 else base ** gap)
        previous = level
        yield weight


def _level_sum(levels: list[int], counts: list[int], base: Any) -> Any:
    """``Σ count · base**level`` in the caller's gmpy2 context."""
    total = gmpy2.mpfr(0)
    for weight, count in zip(_level_weights(base, levels), counts, strict=True):
        total = total + (weight if count == 1 else weight * count)
    return total


def _trapped(function: Any, *args: Any) -> Any:
    """Call ``function``; turn gmpy2's rounding traps into :class:`InexactArithmeticError`."""
    try:
        return function(*args)
    except (gmpy2.InexactResultError, gmpy2.UnderflowResultError,
            gmpy2.OverflowResultError) as error:
        raise InexactArithmeticError(
            f"an operation of the exact mechanism would have been rounded ({error!r}); "
            f"raise the precision (see dpkit.exponential.compute_precision)") from error


# --------------------------------------------------------------------------------------
# Full precision: Ilvento (2020), Algorithms 2-4


def _power_bound(total: Any) -> int:
    """The smallest integer ``K`` with ``2**K ≥ total`` (``total > 0``, exact)."""
    exponent, mantissa = gmpy2.frexp(total)   # total = mantissa · 2**exponent, mantissa in [1/2, 1)
    return exponent - 1 if mantissa == 0.5 else exponent


def full_precision_sample(k: np.ndarray, x: int, y: int, precision: int,
                          rng: RandomSource) -> int:
    """Draw index ``i`` with probability ``b**k[i] / Σ_j b**k[j]``, ``b = x / 2**y``, exactly.

    Ilvento (2020), Algorithms 2–4, with outcomes grouped by exponent: the total weight is
    computed exactly at ``precision`` bits (MPFR, inexact flag trapped); a uniform point
    ``t`` on the grid of multiples of ``2**(K - precision)`` in ``[0, 2**K)`` is redrawn
    until ``t < total`` (no division); the exponent level whose cumulative interval
    contains ``t`` is found by a second exact pass, and one of its outcomes is picked
    uniformly (the same distribution as scanning outcomes one by one, since all outcomes
    of a level have the same weight).

    Raises
    ------
    InexactArithmeticError
        If any operation would be rounded, or if the grid of ``t`` is coarser than the
        granularity ``2**(-y·max(k))`` of the cumulative weights (which would bias the draw).
    """
    levels, counts = _levels(k)
    base = exact_base(x, y)
    with exact_context(precision):
        total = _trapped(_level_sum, levels, counts, base)
        bound = _power_bound(total)
        finest = -y * levels[-1]       # every cumulative weight is a multiple of 2**finest
        if bound - precision > finest:
            raise InexactArithmeticError(
                f"precision {precision} is too small to sample exactly: the uniform grid "
                f"2**{bound - precision} is coarser than the weights' granularity "
                f"2**{finest}; need precision >= {bound - finest}")
        while True:    # rejection: at most 2 rounds expected since 2**bound < 2 * total
            point = _trapped(gmpy2.mul_2exp, gmpy2.mpfr(rng.bits(precision)),
                             bound - precision)
            if point < total:
                break

        def scan() -> int:
            cumulative = gmpy2.mpfr(0)
            for level, weight, count in zip(levels, _level_weights(base, levels), counts,
                                            strict=True):
                cumulative = cumulative + weight * count
                if point < cumulative:
                    return level
            return levels[-1]      # unreachable: the last cumulative weight is the total

        chosen = _trapped(scan)
    members = np.flatnonzero(k == chosen)
    return int(members[rng.randbelow(len(members))])


# --------------------------------------------------------------------------------------
# Exact integers: Ilvento (2020), Algorithms 3 and 4


def integer_weights(k: np.ndarray, x: int, y: int, *, small: bool = True) -> list[Any]:
    """The weights ``b**k_i`` scaled by ``2**(y·K)``, ``K = max k``: exact integers.

    ``b**k · 2**(yK) = x**k · 2**(y·(K - k))``. Scaling all weights by the same factor does
    not change the distribution ``w_i / Σ w``. Computed with GMP (``gmpy2.mpz``); returned
    as Python ints, or as ``mpz`` with ``small=False`` (faster for the samplers).

    >>> integer_weights(np.array([0, 1, 2]), 3, 2)     # b = 3/4: 1, 3/4, 9/16 times 16
    [16, 12, 9]
    """
    levels = sorted(set(k.tolist()))
    largest, powers = levels[-1], {}
    power, previous = gmpy2.mpz(1), 0
    for level in levels:                       # x**level by multiplying in the gaps (GMP)
        power *= gmpy2.mpz(x) ** (level - previous)
        previous = level
        powers[level] = power << (y * (largest - level))
    return [int(powers[level]) if small else powers[level] for level in k.tolist()]


def get_random_value(total: int, rng: RandomSource, *, rounds: int | None = None) -> int | None:
    """A uniform integer in ``[0, total)`` by rejection from ``bitlen(total - 1)`` bits.

    With ``rounds=None`` (Algorithm 2's loop) candidates are drawn until one is below
    ``total``; each is accepted with probability ``total / 2**m > 1/2``, so the number of
    rounds is geometric and depends on ``total`` — on the data. With ``rounds=r``
    (Algorithm 4) exactly ``r`` candidates are always drawn and compared; the first one
    below ``total`` is returned, or ``None`` if all ``r`` were rejected, which happens with
    probability ``(1 - total/2**m)**r < 2**-r``.

    Parameters
    ----------
    total : int
        The exclusive upper bound, ``total ≥ 1``.
    rng : RandomSource
    rounds : int, optional
        Fixed number of candidates (``≥ 1``), or ``None`` for unbounded rejection.

    Returns
    -------
    int or None

    >>> from dpkit.rng import seeded
    >>> get_random_value(5, seeded(1), rounds=64) in range(5)
    True
    """
    bits = (total - 1).bit_length()
    if rounds is None:
        while True:
            candidate = rng.bits(bits)
            if candidate < total:
                return candidate
    chosen = None
    for _ in range(rounds):                 # no early exit: the same work whatever total is
        candidate = rng.bits(bits)
        accept = candidate < total
        chosen = candidate if accept and chosen is None else chosen
    return chosen


def random_binary_search_sample(k: np.ndarray, x: int, y: int, rng: RandomSource) -> int:
    """Draw index ``i`` with probability ``b**k[i] / Σ_j b**k[j]`` by random binary search.

    Ilvento (2020), Algorithm 3, in exact integer arithmetic (:func:`integer_weights`). The
    total ``T`` is padded with a dummy outcome ``⊥`` of weight ``2**m - T``, ``2**m`` the
    least power of two ``≥ T``, so that a uniform point ``t`` in ``[0, 2**m)`` is just ``m``
    random bits. They are drawn one at a time, most significant first: after ``j`` bits,
    ``t`` lies in ``[lo, lo + 2**(m-j))``. As soon as that interval lies inside one
    cumulative interval ``[C_{i-1}, C_i)`` the outcome is ``i`` (every completion of the
    bits gives ``i``); if it lies at or above ``T``, ``⊥`` was drawn and a new round
    starts. Each round returns ``i`` with probability ``w_i / 2**m``, so the result has
    probability exactly ``w_i / T``; no division, no rounding.

    >>> from dpkit.rng import seeded
    >>> random_binary_search_sample(np.array([0, 1, 2]), 3, 2, seeded(7)) in range(3)
    True
    """
    weights = integer_weights(k, x, y, small=False)
    cumulative = list(itertools.accumulate(weights))
    while True:
        index = search_round(cumulative, rng)
        if index is not None:
            return index


def search_round(cumulative: list[int], rng: RandomSource) -> int | None:
    """One round of the random binary search: an index, or ``None`` for the dummy ``⊥``.

    ``cumulative`` are the integer cumulative weights ``C_0 < … < C_{n-1} = T`` (positive
    weights); the round reads at most ``m = bitlen(T - 1)`` bits and returns ``i`` for
    exactly ``w_i`` of the ``2**m`` equally likely bit strings, ``None`` for the other
    ``2**m - T``.
    """
    total = cumulative[-1]
    low, width = 0, 1 << (total - 1).bit_length()
    while True:
        width >>= 1
        low += rng.bits(1) * width
        if low >= total:                    # the interval lies in ⊥'s share
            return None
        index = bisect.bisect_right(cumulative, low)
        if low + width <= cumulative[index]:
            return index


class CountingSource(RandomSource):
    """Wrap a source and count the random bits drawn through it (for documentation).

    ``bits(k)`` counts ``k``; ``bytes(n)`` counts ``8n``. Draws built on them
    (``randbelow``, ``bernoulli``, ``uint64``) are counted through those.

    >>> from dpkit.rng import seeded
    >>> counter = CountingSource(seeded(0))
    >>> _ = counter.bits(5), counter.randbelow(8)
    >>> counter.count
    8
    """

    def __init__(self, inner: RandomSource) -> None:
        super().__init__()
        self._inner = inner
        self.count = 0

    def bytes(self, n: int) -> bytes:
        self.count += 8 * n
        return self._inner.bytes(n)

    def bits(self, k: int) -> int:
        value = self._inner.bits(k)
        self.count += k
        return value


# --------------------------------------------------------------------------------------
# Level 0 of the fast sampler: IEEE doubles with rigorous bounds


@public_table(maxsize=64)
def _power_table(x: int, y: int, chunk: int) -> tuple[np.ndarray, np.ndarray]:
    """Doubles bracketing ``b**(j · 2**(10·chunk))`` for ``j < 1024`` (``b = x / 2**y``).

    Each entry is the correctly rounded power (MPFR, IEEE-754 double format with
    subnormals), rounded down for the lower table and up for the upper one.
    """
    base = exact_base(x, y)
    step = 1 << (_CHUNK_BITS * chunk)
    tables = []
    for rounding in (gmpy2.RoundDown, gmpy2.RoundUp):
        context = gmpy2.ieee(64)
        context.round = rounding
        with context:
            table = np.array([float(base ** (j * step)) for j in range(_CHUNK)])
        table.flags.writeable = False              # shared through the cache
        tables.append(table)
    return tables[0], tables[1]


@dataclass(frozen=True)
class PowerTables:
    """The tables of powers level 0 of :func:`fast_sample` reads, for one base ``b = x/2**y``.

    Built by :func:`power_tables` from *public* parameters only (the base and the largest
    exponent the public utility bounds allow), before a release's clock starts: a release
    then reads tables it was handed and never builds one, so its work does not depend on
    which tables an earlier release left in the caches (nor, through them, on the data).

    Attributes
    ----------
    direct : numpy.ndarray or None
        :func:`_lower_table` (``None`` for bases too close to 1 for a direct table).
    chunks : tuple of (numpy.ndarray, numpy.ndarray)
        Without a direct table: :func:`_power_table` for chunks ``0 … m-1``, enough for
        every exponent below ``2**(10·m)``; empty otherwise.
    fixed : tuple of numpy.ndarray or None
        Level 1's table (:func:`~dpkit._samplers.fixed_point.fixed_point_table`), ``None``
        for bases too close to 1 (then level 1 is skipped).
    """

    direct: np.ndarray | None
    chunks: tuple[tuple[np.ndarray, np.ndarray], ...]
    fixed: tuple[np.ndarray, ...] | None = None


def power_tables(x: int, y: int, largest: int) -> PowerTables:
    """The :class:`PowerTables` of ``b = x / 2**y`` for exponents in ``[0, largest]``.

    ``largest`` must come from public quantities (the span of the public utility bounds),
    never from the data: which tables are built, and how many chunk products
    :func:`weight_bounds` computes, depend on it alone. The tables are cached (keyed by
    ``x``, ``y`` and the chunk), so building them again costs a lookup.
    """
    direct = _lower_table(x, y)
    return PowerTables(direct, () if direct is not None else _chunk_tables(x, y, largest),
                       fixed_point_table(x, y))


def _chunk_tables(x: int, y: int,
                  largest: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """:func:`_power_table` for every 10-bit chunk of the exponents ``0 … largest``."""
    count = max(1, -(-max(int(largest), 0).bit_length() // _CHUNK_BITS))
    return tuple(_power_table(x, y, chunk) for chunk in range(count))


def weight_bounds(k: np.ndarray, x: int, y: int,
                  tables: PowerTables | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Doubles ``lo ≤ b**k ≤ hi`` elementwise, ``b = x / 2**y``, for non-negative ``k``.

    ``b**k`` is the product over the 10-bit chunks of ``k`` of table entries; every
    product is rounded outward with :func:`numpy.nextafter`, so the bounds are rigorous
    (IEEE-754 multiplication is correctly rounded). Every chunk of ``tables`` is
    multiplied in, whatever ``k`` (an entry ``b**0 = 1`` for a chunk of zeros): the work
    depends on the tables, built from public bounds, not on the largest ``k``. Without
    ``tables`` (documentation and tests only), the chunks that ``k`` needs are used.

    Raises
    ------
    ValueError
        If an exponent of ``k`` needs more chunks than ``tables`` hold.
    """
    chunks = _chunk_tables(x, y, int(k.max())) if tables is None else tables.chunks
    if not chunks or int(k.max()) >> (_CHUNK_BITS * len(chunks)):
        raise ValueError(f"the largest exponent {int(k.max())} needs more than the "
                         f"{len(chunks)} chunk tables of {_CHUNK_BITS} bits given")
    low, high = chunks[0]
    lo, hi = low[k & (_CHUNK - 1)], high[k & (_CHUNK - 1)]
    for chunk, (low, high) in enumerate(chunks[1:], start=1):
        index = (k >> (_CHUNK_BITS * chunk)) & (_CHUNK - 1)
        lo = np.nextafter(lo * low[index], 0.0)
        hi = np.nextafter(hi * high[index], np.inf)
    return lo, hi


@public_table(maxsize=64)
def _lower_table(x: int, y: int) -> np.ndarray | None:
    """``RD(b**k)`` for ``k = 0 … K``, ``K`` the first ``k`` with ``b**k < 2**-1074``.

    Each entry is the power correctly rounded down to a double (MPFR, IEEE-754 double
    format with subnormals); the last is ``0``, and since ``b < 1`` every larger power is
    below ``2**-1074`` too, so ``table[min(k, K)]`` is a lower bound for every ``k ≥ 0``
    whose next double up is an upper bound. ``None`` when ``K ≥ _TABLE_LIMIT`` (``b``
    close to 1, ``η ≲ 1074 / _TABLE_LIMIT``): then :func:`weight_bounds` is used.
    """
    if (y - math.log2(x)) * _TABLE_LIMIT < 1000:      # K ≈ 1074/η: clearly too long
        return None
    base = exact_base(x, y)
    context = gmpy2.ieee(64)
    context.round = gmpy2.RoundDown
    entries = []
    with context:
        while len(entries) < _TABLE_LIMIT:
            entries.append(float(base ** len(entries)))
            if entries[-1] == 0.0:
                table = np.array(entries)
                table.flags.writeable = False          # shared through the cache
                return table
    return None


def _down(value: float) -> float:
    """A double ``≤`` the exact result of the operation that produced ``value`` (≥ 0)."""
    return max(math.nextafter(value, -math.inf), 0.0)


def _up(value: float) -> float:
    """A double ``≥`` the exact result of the operation that produced ``value``."""
    return math.nextafter(value, math.inf)


def _float_level(k: np.ndarray, x: int, y: int, point: int,
                 tables: PowerTables | None = None) -> tuple[int, int]:
    """Bracket the outcome with doubles: return ``(lo, hi)`` with ``lo ≤ outcome ≤ hi``.

    Uses the direct table of :func:`_lower_table` when ``b`` allows one
    (:func:`_table_level`), otherwise the chunked products of :func:`weight_bounds`
    (:func:`_product_level`). Both are rigorous; they differ only in speed and tightness.
    ``tables`` (:func:`power_tables`) default to those ``k`` needs (tests only).
    """
    if tables is None:
        tables = power_tables(x, y, int(k.max()))
    if tables.direct is None:
        return _product_level(k, x, y, point, tables)
    return _table_level(k, tables.direct, point)


def _error_factors(n: int) -> tuple[float, float]:
    """``(1 - E·2**-52, 1 + E·2**-52)``: the summation error factors of level 0.

    ``E`` bounds the number of roundings any term passes through in a floating-point sum
    that level 0 computes: ``E = n`` for one block (a block sum or a prefix sum of at most
    ``n`` terms, any binary tree of additions), and ``E = n + 2·BLOCK`` for several (a
    term passes at most ``BLOCK - 1`` roundings inside its block sum, one per later block
    in the running sum of block sums, and ``BLOCK`` in the prefix within a block plus the
    addition of the earlier blocks' total). Each rounding multiplies by ``1 + δ`` with
    ``|δ| ≤ u = 2**-53`` (sums of subnormals are exact), so a computed sum ``F`` of
    non-negative terms whose exact sum is ``L`` has ``L·(1 - u)**E ≤ F ≤ L·(1 + u)**E``
    (Higham 2002, §4.2). For ``2Eu ≤ 1/2``, ``(1 + u)**E ≤ 1/(1 - 2Eu)`` (logarithms:
    ``Eu - 2Eu ≤ 0``) and ``(1 - u)**E ≥ 1/(1 + 2Eu)`` (``-Eu - Eu² + 2Eu - 2E²u² ≥ 0``),
    hence ``F·shrink ≤ L ≤ F·grow``. Both factors are exact doubles (``E < 2**52``).
    """
    errors = n if n <= BLOCK else n + 2 * BLOCK
    if errors > 1 << 48:                    # far beyond memory: keeps 2Eu ≤ 2**-4
        raise ValueError(f"too many outcomes for the fast sampler: {n}")
    return 1.0 - errors * 2.0 ** -52, 1.0 + errors * 2.0 ** -52


def _rd(value: float) -> float:
    """A double ``≤`` the exact result of the operation that produced ``value`` (any sign).

    ``value`` is the round-to-nearest result ``r`` of one operation with exact result
    ``z``; ``|r - z|`` is at most half the gap around ``r``, so the next double below
    ``r`` is ``≤ z``.
    """
    return math.nextafter(value, -math.inf)


def _table_level(k: np.ndarray, table: np.ndarray, point: int) -> tuple[int, int]:
    """Level 0 with one lower bound per weight: ``table[min(k_i, K)] ≤ w_i``.

    **Bounds on each weight.** ``ℓ_i = table[min(k_i, K)]`` is ``RD(b**k_i)`` for
    ``k_i < K`` and ``0`` for ``k_i ≥ K`` (then ``b**k_i ≤ b**K < 2**-1074``). In both cases
    ``ℓ_i ≤ w_i ≤ next double above ℓ_i ≤ ℓ_i·(1 + 2**-52) + 2**-1074`` (the gap above a
    normal double ``d`` is at most ``2**-52·d``, above a subnormal or zero ``2**-1074``).
    So with ``L_j = Σ_{i≤j} ℓ_i`` exactly: ``L_j ≤ C_j ≤ L_j·(1 + 2**-52) + n·2**-1074``.

    **Sums.** The weights are gathered block by block (``BLOCK`` at a time, so the
    temporaries stay in cache), each block summed; ``P`` is the running sum of the block
    sums, and within a candidate block ``F_j = P_{b-1} + cumsum`` of its lower bounds. Each
    is a floating-point sum ``F`` of non-negative terms with ``F·shrink ≤ L ≤ F·grow``
    (:func:`_error_factors`). Hence ``T ∈ [F_T·shrink, F_T·grow·(1 + 2**-52) + n·2**-1074]``
    for the computed total ``F_T``, and ``V·T ∈ [A, B]`` with ``V ∈ [point, point + 1)·2**-53``
    and outward rounding (:func:`_rd`, :func:`_up`).

    **Decision.** Boundary ``j`` is certainly ``C_j ≤ V·T`` (the outcome is ``> j``) when
    ``F_j ≤ a = RD(RD(RD(A - n·2**-1074) / (1 + 2**-52)) / grow)``, as then
    ``C_j ≤ F_j·grow·(1 + 2**-52) + n·2**-1074 ≤ A``; and certainly ``C_j > V·T`` (the
    outcome is ``≤ j``) when ``F_j > c = RU(B / shrink)``, as then ``C_j ≥ F_j·shrink > B``.
    The outcome ``#{j : C_j ≤ V·T}`` is therefore at least ``j + 1`` for every boundary of
    the first kind and at most ``j`` for every boundary of the second. Block ends are
    tested first (``P``); only blocks whose ends leave the outcome open get their
    within-block sums. No step needs the sums to be monotone across blocks.
    """
    n = k.size
    starts = range(0, n, BLOCK)
    buffer = np.empty(min(n, BLOCK))

    def lower(start: int) -> np.ndarray:
        part = k[start:start + BLOCK]
        return np.take(table, part, out=buffer[:part.size], mode="clip")

    prefix = np.cumsum([lower(start).sum() for start in starts])
    a, c = _thresholds(float(prefix[-1]), n, point)
    certain = int(np.searchsorted(prefix, a, side="right"))   # block ends C_j ≤ V·T
    possible = int(np.searchsorted(prefix, c, side="right"))  # others have C_j > V·T
    first = certain * BLOCK
    last = min((possible + 1) * BLOCK - 1, n - 1)
    for block in range(certain, min(possible, len(starts) - 1) + 1):
        start = starts[block]
        sums = np.cumsum(lower(start))
        if block:
            sums += prefix[block - 1]
        certified = int(np.searchsorted(sums, a, side="right"))     # C_j ≤ V·T, j < this
        open_ = int(np.searchsorted(sums, c, side="right"))     # C_j > V·T from this on
        # selected by indexing, not by a branch: the same calls whatever the draw (review 24)
        first = max(first, (first, start + certified)[certified > 0])
        last = min(last, (last, start + open_)[open_ < sums.size])
    return first, last


def _thresholds(total: float, n: int, point: int) -> tuple[float, float]:
    """The decision thresholds ``(a, c)`` of :func:`_table_level`, rounded outward.

    For the computed total ``F_T`` (``total``) of ``n`` lower bounds and
    ``V ∈ [point, point + 1)·2**-53``, with ``s, g = shrink, grow``, ``r = 1 + 2**-52`` and
    ``t = n·2**-1074`` (all exact doubles): ``V·T ≥ A = RD(v_low·RD(F_T·s))`` and
    ``V·T ≤ B = RU(v_high·RU(RU(RU(F_T·g)·r) + t))``; then
    ``a = RD(RD(RD(A - t) / r) / g)`` satisfies ``a·g·r + t ≤ A`` and ``c = RU(B / s)``
    satisfies ``c·s ≥ B``. Each ``RD``/``RU`` is one round-to-nearest operation stepped
    one double outward (:func:`_rd`, :func:`_up`).
    """
    shrink, grow = _error_factors(n)
    ratio, tiny = 1 + 2.0 ** -52, n * 2.0 ** -1074              # exact doubles
    v_low, v_high = point * 2.0 ** -53, (point + 1) * 2.0 ** -53   # exact
    a = _rd(_rd(_rd(_rd(v_low * _rd(total * shrink)) - tiny) / ratio) / grow)
    c = _up(_up(v_high * _up(_up(_up(total * grow) * ratio) + tiny)) / shrink)
    return a, c


def _product_level(k: np.ndarray, x: int, y: int, point: int,
                   tables: PowerTables) -> tuple[int, int]:
    """Level 0 from :func:`weight_bounds` (for bases too close to 1 for a direct table).

    ``V ∈ [point, point + 1) · 2**-53``. With ``F``/``G`` the floating-point cumulative sums
    of the lower/upper weight bounds, :func:`_error_factors` gives
    ``F_j·shrink ≤ C_j ≤ G_j·grow``. The outcome is the number of
    ``j`` with ``C_j ≤ V·T``: certainly counted when ``G_j ≤ A ≤ V·T`` and certainly not
    when ``F_j > B ≥ V·T``; ``A`` and ``B`` are computed with outward rounding.
    """
    n = k.size
    lo, hi = weight_bounds(k, x, y, tables)
    lower_sums, upper_sums = np.cumsum(lo), np.cumsum(hi)
    shrink, grow = _error_factors(n)
    v_low, v_high = point * 2.0 ** -53, (point + 1) * 2.0 ** -53   # exact
    a = _down(_down(_down(v_low * float(lower_sums[-1])) * shrink) / grow)
    b = _up(_up(_up(v_high * float(upper_sums[-1])) * grow) / shrink)
    first = int(np.searchsorted(upper_sums, a, side="right"))
    last = min(int(np.searchsorted(lower_sums, b, side="right")), n - 1)
    return first, last


def handover_probability(k: np.ndarray, x: int, y: int) -> float:
    """The probability that level 0 leaves a draw undecided (an estimate, for documentation).

    Level 0 is undecided when ``V`` falls in the bracket of some cumulative boundary
    ``C_j/T``, which is about ``[F_j·s/(G_{n-1}·g), G_j·g/(F_{n-1}·s)]`` widened by the
    ``2**-53`` resolution of ``V`` (``s``, ``g`` the summation-error factors of
    :func:`_float_level`); this returns the measure of the union of those brackets,
    evaluated in double precision.
    """
    n = k.size
    if n == 1:
        return 0.0
    lo, hi = weight_bounds(k, x, y)
    lower_sums, upper_sums = np.cumsum(lo), np.cumsum(hi)
    shrink, grow = _error_factors(n)
    start = lower_sums[:-1] * shrink / (upper_sums[-1] * grow) - 2.0 ** -53
    stop = upper_sums[:-1] * grow / (lower_sums[-1] * shrink) + 2.0 ** -53
    covered = np.maximum.accumulate(np.concatenate([[0.0], stop[:-1]]))
    return float(np.clip(stop - np.maximum(start, covered), 0.0, None).sum())


# --------------------------------------------------------------------------------------
# Refinement levels of the fast sampler: MPFR directed rounding, then exact


def _extend(point: int, bits: int, target: int, rng: RandomSource) -> tuple[int, int]:
    """Append fresh random bits to the lazily drawn ``V`` until it has ``target`` bits."""
    if target > bits:
        point = (point << (target - bits)) | rng.bits(target - bits)
        bits = target
    return point, bits


def _mp_level(k: np.ndarray, base: Any, precision: int, point: int, bits: int,
              first: int, last: int) -> tuple[int, int]:
    """Narrow ``[first, last]`` with MPFR bounds at ``precision`` bits (directed rounding)."""
    bounds = []
    for rounding in (gmpy2.RoundDown, gmpy2.RoundUp):
        with directed_context(precision, rounding):
            total = _level_sum(*_levels(k), base)
            prefix = _level_sum(*_levels(k[:first]), base)
            v = gmpy2.mpfr(point + (rounding == gmpy2.RoundUp), bits + 1)   # exact
            threshold = gmpy2.div_2exp(v, bits) * total
            sums = []
            for level in k[first:last]:
                prefix = prefix + base ** int(level)
                sums.append(prefix)
        bounds.append((threshold, sums))
    (low_threshold, low_sums), (high_threshold, high_sums) = bounds
    certain = sum(1 for s in high_sums if s <= low_threshold)      # C_j ≤ V·T for sure
    possible = sum(1 for s in low_sums if s <= high_threshold)     # C_j ≤ V·T maybe
    return first + certain, first + possible


def _exact_level(k: np.ndarray, x: int, y: int, precision: int, point: int, bits: int,
                 first: int, last: int, rng: RandomSource) -> int:
    """Decide the outcome exactly: exact sums (inexact flag trapped), then integers."""
    base = exact_base(x, y)
    scale = y * int(k.max())          # every weight is a multiple of 2**-scale
    with exact_context(precision):
        def exact_values() -> tuple[Any, list[Any]]:
            total = _level_sum(*_levels(k), base)
            prefix = _level_sum(*_levels(k[:first]), base)
            sums = []
            for level in k[first:last]:
                prefix = prefix + base ** int(level)
                sums.append(prefix)
            return total, sums

        total, sums = _trapped(exact_values)
        as_integer = [gmpy2.mpz(_trapped(gmpy2.mul_2exp, s, scale)) for s in [total, *sums]]
    total_int, sums_int = as_integer[0], as_integer[1:]
    while True:
        low, high = point * total_int, (point + 1) * total_int
        certain = sum(1 for s in sums_int if s << bits <= low)
        possible = sum(1 for s in sums_int if s << bits < high)
        if certain == possible:
            return first + certain
        point, bits = _extend(point, bits, bits + 32, rng)


def fast_sample(k: np.ndarray, x: int, y: int, rng: RandomSource, *,
                precision: Any, tables: PowerTables | None = None, start: str = "float",
                mp_precisions: tuple[int, ...] = _MP_PRECISIONS,
                float_slack: float = 0.0) -> int:
    """Draw index ``i`` with probability ``b**k[i] / Σ_j b**k[j]`` exactly, in ``O(n)`` time.

    Parameters
    ----------
    k : numpy.ndarray of int32 or int64
        Non-negative exponents (the rounded losses minus their minimum).
    x, y : int
        The base ``b = x / 2**y``, ``x`` odd, ``0 < x < 2**y``.
    rng : RandomSource
    precision : int or callable
        Bits for the exact level (or a function returning them, called only if the exact
        level is reached).
    tables : PowerTables, optional
        Level 0's tables, from :func:`power_tables` with the *public* largest exponent. A
        release must pass them, built before its clock starts; the default, the tables
        ``k`` itself needs, builds them from the data (tests and documentation only).
    start : {"float", "fixed", "mp", "exact"}
        First level to use: level 0 (doubles), level 1 (exact 96-bit fixed-point sums,
        :mod:`~dpkit._samplers.fixed_point`; skipped without its table), the MPFR levels or
        the exact one. Tests start later to exercise the fallback levels.
    mp_precisions : tuple of int
        The MPFR precisions of the intermediate levels.
    float_slack : float
        Tests only: widen the level-0 bracket by this relative amount, so that it is
        ambiguous far more often and hands over to the next level.

    Raises
    ------
    InexactArithmeticError
        If the exact level is reached and ``precision`` is too small.
    """
    n = k.size
    if n == 1:
        return 0
    point, bits = rng.bits(53), 53
    first, last = 0, n - 1
    tables = power_tables(x, y, int(k.max())) if tables is None else tables
    if start == "float":
        first, last = _float_level(k, x, y, point, tables)
        if float_slack:
            first = int(np.floor(first * (1 - float_slack)))
            last = min(int(np.ceil(last * (1 + float_slack))) + 1, n - 1)
        if first == last:
            return first
    if start in ("float", "fixed") and tables.fixed is not None:
        point, bits = _extend(point, bits, V_BITS, rng)
        first, last = fixed_point_level(k, tables.fixed, point, bits, first, last)
        if first == last:
            return first
    if start in ("float", "fixed", "mp"):
        base = exact_base(x, y)
        for bits_p in mp_precisions:
            point, bits = _extend(point, bits, bits_p + _V_SLACK, rng)
            first, last = _mp_level(k, base, bits_p, point, bits, first, last)
            if first == last:
                return first
    exact_bits = precision() if callable(precision) else precision
    return _exact_level(k, x, y, exact_bits, point, bits, first, last, rng)
