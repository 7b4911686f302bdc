"""The textbook Laplace mechanism in floating point. **Unsafe: never use it to release data.**

This is the implementation found in textbooks and early libraries: draw a uniform float
``U`` and a random sign ``S`` and return ``value + S·(Δ/ε)·ln(1/U)``, the Laplace noise
computed in floating point. On paper it is ε-differentially private; as a floating-point
program it is not. Mironov (2012) showed that the set of floats it can output depends on
``value``, so a single release often reveals exactly which of two inputs was used
(:func:`dpkit.attacks.laplace_lsb_attack`). The safe version is
:func:`dpkit.laplace.laplace_mechanism`.

:func:`leaky_discrete_laplace` and :func:`leaky_sum_release` are *exact* samplers with a
different flaw: the number of loop iterations, hence the running time, grows with the size of
the noise, so whoever can time a release learns ``|noise|`` (Jin, McMurtry, Rubinstein &
Ohrimenko 2022; :func:`dpkit.attacks.timing_attack`). :func:`cks_discrete_laplace` is the
one-at-a-time sampler dpkit itself used for small requests before it switched to a fixed-cost
sampler; it leaks too, more weakly.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import (
    check_epsilon,
    check_finite_array,
    check_integer,
    check_real,
    check_sensitivity,
)
from dpkit._exact import as_fraction
from dpkit._samplers.bernoulli import bernoulli_exp
from dpkit._samplers.grid import add_units, from_grid, to_grid
from dpkit.rng import RandomSource, resolve

__all__ = [
    "cks_discrete_laplace",
    "cks_laplace_mechanism",
    "laplace_mechanism",
    "leaky_discrete_laplace",
    "leaky_sum_release",
    "textbook_laplace_noise",
]


def textbook_laplace_noise(uniforms: np.ndarray, signs: np.ndarray, scale: float) -> np.ndarray:
    """Laplace noise by the textbook formula ``S · λ · ln(1/U)``, in floating point.

    ``U`` is uniform in (0, 1] on the grid of multiples of ``2**-53`` and ``S`` a random sign:
    ``-λ·ln U`` is exponential with mean ``λ`` and a random sign makes it Laplace. Only the
    logarithm and the product round, so the noise takes at most ``2**54`` distinct,
    unevenly spaced values: this is the sampler Mironov's attack inverts.

    Parameters
    ----------
    uniforms : numpy.ndarray of float64
        Draws of ``U`` in (0, 1].
    signs : numpy.ndarray of float64
        ``+1.0`` or ``-1.0``.
    scale : float
        The Laplace scale ``λ``.

    Returns
    -------
    numpy.ndarray of float64
    """
    return (-scale * np.asarray(signs, dtype=np.float64)) * np.log(uniforms)


def laplace_mechanism(value: Any, sensitivity: float, epsilon: float,
                      rng: Any = None) -> float | np.ndarray:
    """The textbook floating-point Laplace mechanism ``value + Laplace(Δ/ε)``. **Unsafe.**

    Parameters
    ----------
    value : float or array_like of float
        The true query answer.
    sensitivity : float
        ℓ1 sensitivity ``Δ`` of the query (finite, > 0).
    epsilon : float
        Privacy-loss parameter (finite, > 0).
    rng : None or dpkit.rng.RandomSource
        Source of the uniform draws (``None``: the secure default).

    Returns
    -------
    float or numpy.ndarray
        ``value + noise`` computed in float64.

    Raises
    ------
    TypeError, ValueError
        For invalid input, as :func:`dpkit.laplace.laplace_mechanism`.

    Notes
    -----
    **Privacy actually provided: none in the worst case.** The mathematical mechanism is
    ε-DP (Dwork & Roth 2014, Theorem 3.6), but this floating-point program is not: for
    inputs 0 and 1 and scales 1 to 10, most single outputs can be produced from only one of
    the two inputs (Mironov 2012, Section 3; measured in the Laplace chapter). The noise is
    computed by :func:`textbook_laplace_noise` with scale ``Δ/ε`` in floating point.
    """
    scalar = np.ndim(value) == 0 and not isinstance(value, np.ndarray)
    array = (np.array([check_real(value, "value")]) if scalar
             else check_finite_array(value, "value", allow_empty=True))
    scale = check_sensitivity(sensitivity) / check_epsilon(epsilon)
    source = resolve(rng)
    uniforms = 1.0 - source.uniforms(array.shape)              # in (0, 1], exact
    signs = np.where(source.uniforms(array.shape) < 0.5, 1.0, -1.0)
    noise = textbook_laplace_noise(uniforms, signs, scale)
    released = array + noise
    return float(released[0]) if scalar else released


def _positive_scale(scale: Any) -> Fraction:
    value = as_fraction(scale, "scale")
    if value <= 0:
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    return value


def leaky_discrete_laplace(scale: Any, rng: Any = None) -> tuple[int, int]:
    """One exact discrete Laplace draw by counting trials. **Unsafe: its time leaks the noise.**

    A random sign, then ``G`` = the number of successes of independent exact
    Bernoulli(``exp(-1/scale)``) trials before the first failure (so ``P[G = g] ∝
    exp(-g/scale)``), with ``(-, 0)`` redrawn: exactly ``P[X = x] ∝ exp(-|x|/scale)``. The
    loop runs ``|X| + 1`` trials per attempt, so the running time grows with ``|X|``.

    Parameters
    ----------
    scale : int, Fraction or float
        The scale, > 0 (converted exactly).
    rng : None or dpkit.rng.RandomSource
        Source of random bits (``None``: the secure default).

    Returns
    -------
    (int, int)
        The draw and the number of Bernoulli trials it took (what a stopwatch measures).

    Raises
    ------
    TypeError, ValueError
        If ``scale`` is not a real number > 0 or ``rng`` is not a source.

    Notes
    -----
    **Privacy actually provided:** the *value* is exact discrete Laplace noise, but an
    attacker who sees the running time (or the trial count) learns ``|X|``, and with it the
    true answer up to its sign: no differential privacy at all against a timing attacker
    (Jin, McMurtry, Rubinstein & Ohrimenko, IEEE S&P 2022).
    """
    unit = 1 / _positive_scale(scale)
    source = resolve(rng)
    trials = 0
    while True:
        negative = source.bits(1) == 1
        magnitude = 0
        trials += 1
        while bernoulli_exp(unit, source):
            magnitude += 1
            trials += 1
        if not (negative and magnitude == 0):
            return (-magnitude if negative else magnitude), trials


def leaky_sum_release(value: int, sensitivity: int, epsilon: Any, rng: Any = None) -> int:
    """Release an integer sum with :func:`leaky_discrete_laplace` noise. **Unsafe (timing).**

    Parameters
    ----------
    value : int
        The true sum.
    sensitivity : int
        Its sensitivity ``Δ`` (an integer >= 1).
    epsilon : float
        Privacy-loss parameter (finite, > 0); the noise scale is ``Δ/ε`` (exact).
    rng : None or dpkit.rng.RandomSource

    Returns
    -------
    int
        ``value + X``: ε-DP for an observer of the output only, not private at all for one
        who can time the call (:func:`leaky_discrete_laplace`).
    """
    value = check_integer(value, "value")
    delta = check_integer(sensitivity, "sensitivity", minimum=1)
    scale = Fraction(delta) / as_fraction(check_epsilon(epsilon), "epsilon")
    return value + leaky_discrete_laplace(scale, rng)[0]


def cks_discrete_laplace(scale: Any, rng: RandomSource) -> int:
    """One discrete Laplace draw by Canonne, Kamath & Steinke (2020), Algorithm 2. **Leaks.**

    ``scale = t/s``: ``U`` uniform in ``[0, t)`` accepted with probability ``exp(-U/t)``, ``V``
    the number of exact ``exp(-1)`` successes, ``Y = (U + t·V) // s`` with a random sign and
    ``(-, 0)`` rejected. Exact, and what :mod:`dpkit` drew one sample at a time before it
    switched to a fixed-cost sampler; kept to measure the leak. The ``V`` loop runs about
    ``|Y|/scale`` times, so the running time grows with ``|Y|/scale``.

    Parameters
    ----------
    scale : int, Fraction or float
        The scale, > 0 (converted exactly).
    rng : dpkit.rng.RandomSource

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        If ``scale`` is not a real number > 0.

    Notes
    -----
    **Privacy actually provided:** exact noise, so ε-DP against an observer of the output;
    against one who can time it, the time reveals ``|Y|/scale`` roughly (Spearman
    correlation measured in ``benchmarks/noise.py``).
    """
    ratio = _positive_scale(scale)
    t, s = ratio.numerator, ratio.denominator
    while True:
        u = rng.randbelow(t)
        if not bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while bernoulli_exp(1, rng):
            v += 1
        y = (u + t * v) // s
        negative = rng.bits(1) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def cks_laplace_mechanism(value: float, sensitivity: float, epsilon: float,
                          rng: Any = None) -> float:
    """dpkit's former scalar release: the safe grid mechanism with :func:`cks_discrete_laplace`.

    Identical to :func:`dpkit.laplace.laplace_mechanism` for a scalar (same grid, same exact
    noise distribution, so ε-DP for an observer of the output) except that the noise comes
    from the one-at-a-time sampler whose running time grows with ``|noise|``. **Leaks through
    timing**; kept to measure the leak the fixed-cost sampler closed.

    Parameters
    ----------
    value : float
        The true (scalar) query answer.
    sensitivity, epsilon : float
        As in :func:`dpkit.laplace.laplace_mechanism`.
    rng : None or dpkit.rng.RandomSource

    Returns
    -------
    float
    """
    from dpkit.laplace import laplace_grid

    grid = laplace_grid(sensitivity, epsilon)
    units = to_grid(np.array([check_real(value, "value")]), grid.exponent)
    noise = np.array([cks_discrete_laplace(grid.scale_units, resolve(rng))], dtype=np.int64)
    return float(from_grid(add_units(units, noise), grid.exponent)[0])
