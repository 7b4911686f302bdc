"""Level 1 of the fast base-2 sampler: exact sums of 96-bit fixed-point weights (private).

:func:`dpkit._samplers.base2.fast_sample` draws a uniform ``V`` in ``[0, 1)`` lazily and
returns the outcome ``#{j ≤ n - 2 : C_j ≤ V·T}`` (``C_j`` the cumulative weights,
``T = C_{n-1}``, weights ``w_i = b**k_i``, ``b = x / 2**y``, ``min k = 0`` so ``T ≥ 1``).
Its level 0 (doubles) leaves a draw undecided with a probability that grows as ``n**2``
(its summation error bound is ``n·2**-52``); this level, run only then, decides all but a
fraction ``≤`` :func:`fallback_bound` of the draws, a bound that depends on ``n`` alone.
The release's deadline covers levels 0 and 1, both linear in ``n``; the MPFR and exact
levels after them run past it (see :func:`fallback_bound` for what that costs in privacy).

**Weights.** Each weight is read as an integer ``W(k)`` with
``W(k) ≤ 2**S·b**k < W(k) + 2`` (``S = SCALE = 96``; :func:`fixed_point_table`), held as
three 32-bit limbs in int64, so any block sum of ``2**16`` limbs is exact in int64 and the
block totals are summed exactly as Python ints. Then ``I_j = Σ_{i ≤ j} W(k_i)`` is exact and
``I_j ≤ 2**S·C_j < I_j + 2n``.

**Decision.** With ``V ∈ [P, P + 1)·2**-m`` (``P`` the ``m`` bits of ``V`` drawn so far),
``A = ⌊P·I_T / 2**m⌋ - 2n`` and ``B = ⌊(P + 1)·(I_T + 2n) / 2**m⌋``: ``I_j ≤ A`` gives
``2**S·C_j < I_j + 2n ≤ P·I_T/2**m ≤ V·2**S·T`` (boundary ``j`` lies below ``V·T``), and
``I_j > B`` gives ``2**S·C_j ≥ I_j > (P + 1)(I_T + 2n)/2**m > V·2**S·T`` (it lies above).
Since ``I`` is non-decreasing the outcome lies in ``[#{I_j ≤ A}, #{I_j ≤ B}]``; the level
decides when no ``I_j`` lies in ``(A, B]``.
"""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._samplers.tables import public_table

__all__ = ["SCALE", "V_BITS", "fallback_bound", "fixed_point_level", "fixed_point_table"]

#: Bits after the binary point of the fixed-point weights (three 32-bit limbs).
SCALE = 96
#: Bits of ``V`` this level reads (the first MPFR level's 256 + 64, so that it draws no more).
V_BITS = 320
_LIMB = 32
_BLOCK = 1 << 16           # limbs summed this many at a time: exact in int64 (2**48 at most)
_STEP = 1 << 10            # a block's limbs are summed in steps of this many to locate a sum
_TABLE_LIMIT = 1 << 16     # longest table: bases with η ≥ about S / 2**16


@public_table(maxsize=64)
def fixed_point_table(x: int, y: int, scale: int = SCALE) -> tuple[np.ndarray, ...] | None:
    """Level 1's table: ``W(k)``, ``k = 0 … K``, as three int64 arrays of 32-bit limbs.

    The limbs are ``W >> 64`` (at most ``2**32``), ``W >> 32 & M`` and ``W & M``,
    ``M = 2**32 - 1``.

    ``W(k) = ⌊2**scale·P_k⌋`` with ``P_k`` the power ``b**k`` computed in MPFR at
    ``max(256, bitlen(x))`` bits rounding down (so ``b`` is exact); ``K`` is the first ``k``
    with ``W(k) = 0``, which every larger exponent shares (``k`` is clipped to ``K``).
    ``P_k ≤ b**k ≤ P_k·(1 + 2**-254)**(k + 1)``, so for ``k < 2**16`` and ``scale ≤ 96``,
    ``2**scale·(b**k - P_k) < 1`` and ``W(k) ≤ 2**scale·b**k < W(k) + 2``; and for
    ``k ≥ K``, ``2**scale·b**k ≤ 2**scale·b**K < 2``. ``None`` when ``K`` would exceed
    ``2**16`` (a base too close to 1, ``η`` below about ``scale / 2**16``). ``x``, ``y``
    and ``scale`` are public: the table is built before a release's clock starts.
    """
    if (y - math.log2(x)) * _TABLE_LIMIT < scale + 2:     # K ≈ scale/η: clearly too long
        return None
    context = gmpy2.context(precision=max(256, x.bit_length()), round=gmpy2.RoundDown,
                            emin=gmpy2.get_emin_min(), emax=gmpy2.get_emax_max())
    entries: list[int] = []
    with context:
        base = gmpy2.div_2exp(gmpy2.mpfr(x), y)           # exact
        power = gmpy2.mpfr(1)
        while len(entries) < _TABLE_LIMIT:
            entries.append(int(gmpy2.floor(gmpy2.mul_2exp(power, scale))))
            if entries[-1] == 0:
                masks = (-1, (1 << _LIMB) - 1, (1 << _LIMB) - 1)   # the top limb ≤ 2**32
                limbs = tuple(np.array([(w >> shift) & mask for w in entries], dtype=np.int64)
                              for shift, mask in zip((2 * _LIMB, _LIMB, 0), masks, strict=True))
                for limb in limbs:
                    limb.flags.writeable = False          # shared through the cache
                return limbs
            power = power * base
    return None


def fixed_point_level(k: np.ndarray, table: tuple[np.ndarray, ...], point: int, bits: int,
                      first: int, last: int) -> tuple[int, int]:
    """Narrow the bracket ``[first, last]`` of the outcome with exact fixed-point sums.

    ``V ∈ [point, point + 1)·2**-bits``; ``k`` the non-negative exponents (``min k = 0``);
    ``table`` from :func:`fixed_point_table` (the bound of :func:`fallback_bound` is for
    its ``scale``). Returns the intersection of ``[first, last]`` with this level's
    bracket (see the module notes). The work: three table reads and sums per outcome,
    block by block; then, for each end of the bracket, one block's limbs summed in steps
    of 1,024 and one step's prefix sums.
    """
    n = k.size
    buffer = np.empty(min(n, _BLOCK), dtype=np.int64)

    def limbs_of(start: int) -> list[np.ndarray]:
        part = k[start:start + _BLOCK]
        return [np.take(limb, part, out=buffer[:part.size], mode="clip").copy()
                for limb in table]

    def block_total(start: int) -> int:
        part = k[start:start + _BLOCK]
        return _value([np.take(limb, part, out=buffer[:part.size], mode="clip").sum()
                       for limb in table])

    ends = list(itertools.accumulate(block_total(start) for start in range(0, n, _BLOCK)))
    total = ends[-1]

    def count(at: int) -> int:
        """``#{j : I_j ≤ at}``: whole blocks, then whole steps, then one step's sums."""
        block = bisect.bisect_right(ends, at)
        if block == len(ends):
            return n
        limbs = limbs_of(block * _BLOCK)
        steps = [np.add.reduceat(limb, np.arange(0, limb.size, _STEP)) for limb in limbs]
        step_ends = list(itertools.accumulate(
            (_value([s[i] for s in steps]) for i in range(steps[0].size)),
            initial=ends[block - 1] if block else 0))
        step = bisect.bisect_right(step_ends, at, lo=1) - 1   # step_ends[step] ≤ at
        sums = [np.cumsum(limb[step * _STEP:(step + 1) * _STEP]) for limb in limbs]
        inside = bisect.bisect_right(range(sums[0].size), at,
                                     key=lambda i: step_ends[step] + _value([s[i] for s in sums]))
        return block * _BLOCK + step * _STEP + inside

    below = ((point * total) >> bits) - 2 * n
    above = ((point + 1) * (total + 2 * n)) >> bits
    return max(first, count(below)), min(last, count(above), n - 1)


def _value(limbs: list[Any]) -> int:
    """The integer whose three 32-bit limbs (sums of limbs, any size) are ``limbs``."""
    return (int(limbs[0]) << 2 * _LIMB) + (int(limbs[1]) << _LIMB) + int(limbs[2])


def fallback_bound(n: int, *, bits: int = V_BITS, scale: int = SCALE) -> float:
    """An upper bound, from ``n`` alone, on the probability that level 1 leaves a draw
    undecided: ``(n - 1)·(2**(1 - bits) + (8n + 1)·2**-scale)``, rounded up to a double.

    **Proof.** Undecided means some boundary ``j ≤ n - 2`` has ``A < I_j ≤ B`` (module
    notes). With ``τ = 2**S·T ∈ [I_T, I_T + 2n)``, ``τ ≥ 2**S`` (``T ≥ 1``), ``v = P·2**-m``
    and ``h = 2**-m``: ``2**S·C_j ≥ I_j > A ≥ v·I_T - 1 - 2n > v·τ - 4n - 1`` and
    ``2**S·C_j < I_j + 2n ≤ B + 2n ≤ (v + h)(τ + 2n) + 2n ≤ (v + h)·τ + 4n``, so
    ``v`` lies in an open interval of length ``h + (8n + 1)/τ ≤ h + (8n + 1)·2**-S`` around
    ``C_j/T``. ``P`` is uniform on ``2**m`` values, and such an interval holds at most
    ``ℓ/h + 1`` multiples of ``h``: probability ``≤ 2h + (8n + 1)·2**-S`` per boundary; a
    union bound over the ``n - 1`` boundaries gives the bound. It holds for every vector of
    exponents with ``min k = 0`` (as the mechanism's are), whatever level 0 did first.

    **What it costs in privacy.** A release ends at its deadline unless this event happens;
    then it ends late, at a time that depends on the data. Coupled draw by draw with the
    same release ending always at the deadline (an ``ε``-DP output and a constant time),
    it differs only on this event, so its total-variation distance from an ``ε``-DP
    mechanism is at most ``p`` = this bound, and the release with its end time is
    ``(ε, (1 + e**ε)·p)``-DP (Ratliff & Vadhan, CCS 2024, treat timing as part of the
    output in the same way; the step is the standard one from total-variation closeness).

    Examples
    --------
    >>> from dpkit._samplers.fixed_point import fallback_bound
    >>> fallback_bound(1)
    0.0
    >>> fallback_bound(10**6) < 2.0 ** -52
    True
    """
    exact = Fraction(n - 1) * (Fraction(2, 1 << bits) + Fraction(8 * n + 1, 1 << scale))
    bound = float(exact)
    return bound if Fraction(bound) >= exact else math.nextafter(bound, math.inf)
