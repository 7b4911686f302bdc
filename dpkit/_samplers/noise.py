"""Exact discrete Laplace and discrete Gaussian noise: the entry points the mechanisms call.

:func:`discrete_laplace`
    ``P[X = x] ∝ exp(-|x| / scale)`` on the integers.
:func:`discrete_gaussian`
    ``P[X = x] ∝ exp(-x² / (2 sigma2))`` on the integers.

Each chooses its sampler from the request's *size* and the public scale, never from values:
up to ``FIXED_MAX = 64`` values (and any count at scales beyond the vector sampler's range),
the fixed-cost samplers of :mod:`dpkit._samplers.fixed_cost`; larger arrays, the
block-envelope sampler of :mod:`dpkit._samplers.envelope`, its proposals ``_BLOCK`` at a
time, in one round (the values and spares: :func:`dpkit._samplers.envelope.spare`).

Vectorised sampling
-------------------
Arrays of more than 64 values (scales up to ``2**52``, ``σ`` up to ``2**51``) use the
block-envelope rejection sampler: a table entry (the value 0, a block of ``m = 2**L``
magnitudes, ``m`` about a sixteenth of the scale, or the far tail) is drawn by lazy
inversion against rigorously bracketed cumulative weights, a sign and an offset in the block
by uniform bits, and the proposal is accepted with probability ``ρ(x)/ρ(x*)`` (``x*`` the
block's first magnitude), decided by comparing uniform bits with integer thresholds on the
offset (from MPFR logarithms rounded outwards), then with polynomial brackets of
``exp(-γ)``, then with MPFR brackets when those cannot decide. The random bits are read
exactly as used (:mod:`dpkit._samplers.bits`): at most the entropy of the distribution plus
16 bits a sample, which ``tests/test_envelope.py`` checks (Knuth & Yao 1976 show the entropy
is the least an exact sampler can use on average, and that ``H + 2`` bits suffice);
``benchmarks/bits.py`` prints the count against the entropy.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithms 2 and 3.
D. E. Knuth, A. C. Yao. *The complexity of nonuniform random number generation.* In
Algorithms and Complexity: New Directions and Recent Results, Academic Press, 1976.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer
from dpkit._samplers.envelope import Envelope, gaussian_envelope, laplace_envelope
from dpkit._samplers.exact import FIXED_MAX, check_source, positive_fraction
from dpkit._samplers.fixed_cost import fixed_discrete_gaussian, fixed_discrete_laplace, fixed_result
from dpkit.rng import RandomSource

__all__ = ["discrete_gaussian", "discrete_laplace"]

_BLOCK = 1 << 17          # samples drawn at once (arrays of 1 MB: NumPy passes stay in cache)
_VECTOR_MAX_SCALE = 2**52  # above this scale, arrays use the fixed-cost sampler (Python ints)
_SIZE = int | tuple[int, ...] | None


def _shape(size: Any) -> tuple[int, ...] | None:
    """Validate a ``size`` argument: None, a non-negative int or a tuple of them."""
    if size is None:
        return None
    if isinstance(size, tuple):
        return tuple(check_integer(s, "size", minimum=0) for s in size)
    return (check_integer(size, "size", minimum=0),)


def discrete_laplace(scale: Fraction | int, rng: RandomSource,
                     size: _SIZE = None) -> int | np.ndarray:
    """Exact samples of the discrete Laplace distribution ``P[X = x] ∝ exp(-|x|/scale)``.

    Parameters
    ----------
    scale : Fraction or int
        A rational number > 0 (a float is converted exactly).
    rng : RandomSource
        The source of random bits (use :func:`dpkit.rng.resolve` on a user's ``rng``).
    size : int or tuple of int, optional
        ``None`` (default) returns one Python ``int``; otherwise an array of that shape.

    Returns
    -------
    int or numpy.ndarray
        An ``int64`` array, or ``object`` holding Python ints (chosen from the scale, or
        by a draw beyond the covered digits: probability ``<= e**-64``).

    Raises
    ------
    TypeError
        If ``scale`` is not a real number, ``size`` not an integer (tuple) or ``rng`` not a
        :class:`RandomSource`.
    ValueError
        If ``scale`` is not a finite number > 0 or ``size`` is negative.

    Notes
    -----
    Privacy: adding this noise to an integer-valued query with sensitivity ``D`` (ℓ1) gives
    ``(D/scale)``-differential privacy, because ``P[x]/P[x'] <= exp(|x - x'|/scale)``.
    Up to 64 values (and any count at scales above ``2**52``): the fixed-cost samplers,
    whose running time does not depend on the noise: one value by the interval algorithm
    (a zero trial, a sign and a geometric magnitude's digits decided from one uniform of
    ``B`` bits, :mod:`dpkit._samplers.interval`), more as a difference of two geometric
    variables, 64 random bits a digit (see "Timing" in :mod:`dpkit._samplers` for the
    exceptions, of probability ``<= 2**-64`` per draw or digit). Larger arrays: the exact
    block-envelope sampler of :mod:`dpkit._samplers.envelope` (the same distribution, far fewer
    random bits). Canonne, Kamath &
    Steinke (2020) give the distribution's privacy and a one-at-a-time sampler (Algorithm 2).

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> discrete_laplace(3, seeded(0), size=4).shape
    (4,)
    """
    return _draw(positive_fraction(scale, "scale"), _VECTOR_MAX_SCALE, fixed_discrete_laplace,
                 laplace_envelope, rng, size)


def discrete_gaussian(sigma2: Fraction | int, rng: RandomSource,
                      size: _SIZE = None) -> int | np.ndarray:
    """Exact samples of the discrete Gaussian ``P[X = x] ∝ exp(-x²/(2·sigma2))`` on the integers.

    Parameters
    ----------
    sigma2 : Fraction or int
        The variance parameter ``σ²``, a rational number > 0 (a float is converted exactly).
    rng, size
        As in :func:`discrete_laplace`.

    Returns
    -------
    int or numpy.ndarray
        As :func:`discrete_laplace` returns them.

    Raises
    ------
    TypeError, ValueError
        If ``sigma2`` is not a finite real number > 0; for ``size`` and ``rng``, as
        :func:`discrete_laplace` does.

    Notes
    -----
    Canonne, Kamath & Steinke (2020), Algorithm 3 (discrete Laplace proposal with scale
    ``t = floor(σ) + 1``, accepted with probability ``exp(-(|Y| - σ²/t)²/(2σ²))``; one value
    walked by the interval algorithm takes ``t`` among ``floor(σ)``, ``floor(σ) + 1`` and
    powers of two below 1, whichever accepts most,
    :func:`dpkit._samplers.interval_gaussian.proposal_scale`). Up to 64 values, each
    proposal is drawn and decided at a fixed cost and the number of rounds is independent of
    the values returned (see "Timing" in :mod:`dpkit._samplers`); larger arrays
    use the block-envelope sampler of :mod:`dpkit._samplers.envelope` instead of Algorithm 3 (the
    same distribution, see "Vectorised sampling").
    Privacy (CKS 2020, Theorem 4): for an integer query with ℓ2 sensitivity ``D``, adding
    independent discrete Gaussian noise to each coordinate satisfies ``(D²/(2σ²))``-zCDP and
    is (ε, δ)-DP whenever the continuous Gaussian's privacy profile allows it.
    """
    return _draw(positive_fraction(sigma2, "sigma2"), _VECTOR_MAX_SCALE**2 // 4,
                 fixed_discrete_gaussian, gaussian_envelope, rng, size)


def _draw(parameter: Fraction, vector_max: int,
          fixed: Callable[[Fraction, int, RandomSource], np.ndarray],
          envelope: Callable[[Fraction], Envelope], rng: RandomSource,
          size: _SIZE) -> int | np.ndarray:
    """Route a request by its size and public ``parameter`` (a scale or ``σ²``), never by values.

    Up to ``FIXED_MAX`` values, or any count when ``parameter`` exceeds ``vector_max``: the
    ``fixed`` fixed-cost sampler; larger arrays: the block-envelope sampler ``envelope(parameter)``.
    """
    rng = check_source(rng)
    shape = _shape(size)
    count = 1 if shape is None else math.prod(shape)
    if count <= FIXED_MAX or parameter > vector_max:
        return fixed_result(fixed, parameter, count, shape, rng)
    return _in_blocks(envelope(parameter), count, rng).reshape(shape)


def _in_blocks(envelope: Envelope, count: int, rng: RandomSource) -> np.ndarray:
    """``count`` draws from a :class:`dpkit._samplers.envelope.Envelope`, its proposals
    ``_BLOCK`` at a time (one round: :meth:`~dpkit._samplers.envelope.Envelope.sample`)."""
    return envelope.sample(count, rng, block=_BLOCK)
