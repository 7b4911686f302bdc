"""How often the block-envelope sampler reaches its exact MPFR entry comparison.

The module docstring of :mod:`dpkit._samplers.envelope` states that after 62 bits each of the
``J + 1`` inner cumulative bounds leaves one or two prefixes undecided, so the MPFR
fallback runs with probability at most ``2·(J + 1)·2**-62``, below ``2**-50`` because
``J <= 1421``. These tests check that sentence on the scales with the most blocks (just
below a change of the block width) and at the ends of the vector range. Deterministic.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpkit._samplers import envelope as _envelope

EDGES = [("laplace", Fraction(1, 3)), ("laplace", Fraction(32) - Fraction(1, 10**9)),
         ("laplace", Fraction(32)), ("laplace", Fraction(2**52) - Fraction(1, 3)),
         ("laplace", Fraction(2**52)), ("gaussian", Fraction(1, 4)),
         ("gaussian", Fraction(1024) - Fraction(1, 10**9)), ("gaussian", Fraction(1024)),
         ("gaussian", Fraction(2**102) - Fraction(1, 7)), ("gaussian", Fraction(2**102))]


@pytest.mark.parametrize(("kind", "parameter"), EDGES)
def test_undecided_62_bit_prefixes(kind: str, parameter: Fraction) -> None:
    """Exactly the prefixes in ``[lo_b, hi_b)`` are undecided at 62 bits, at most two per
    inner bound, and their total probability is below ``2·(J + 1)·2**-62 < 2**-50``."""
    env = _envelope.Envelope(kind, parameter)
    bits = _envelope._FIXED_BITS
    assert env.layout.blocks <= 1421
    gaps = (env.table.hi - env.table.lo)[1:-1]                     # the J + 1 inner bounds
    assert gaps.size == env.layout.blocks + 1
    assert gaps.min() >= 1 and gaps.max() <= 2
    undecided = int(gaps.sum())
    assert undecided <= 2 * (env.layout.blocks + 1) and undecided < 2 ** (bits - 50)
    table = env.table
    inside = np.concatenate([np.arange(lo, hi) for lo, hi in zip(table.lo[1:-1], table.hi[1:-1],
                                                                 strict=True)])
    assert np.all(env.table.decide(inside, bits) < 0)
    around = np.concatenate([env.table.lo[1:-1] - 1, env.table.hi[1:-1]])
    around = around[(around >= 0) & (around < 1 << bits)]
    around = around[~np.isin(around, inside)]
    assert np.all(env.table.decide(around, bits) >= 0)
