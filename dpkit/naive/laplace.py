"""The textbook Laplace mechanism in floating point. **Unsafe: never use it to release data.**

This is the implementation found in textbooks and early libraries: draw a uniform float
``U`` and a random sign ``S`` and return ``value + S·(Δ/ε)·ln(1/U)``, the Laplace noise
computed in floating point. On paper it is ε-differentially private; as a floating-point
program it is not. Mironov (2012) showed that the set of floats it can output depends on
``value``, so a single release often reveals exactly which of two inputs was used
(:func:`dpkit.attacks.laplace_lsb_attack`). The safe version is
:func:`dpkit.laplace.laplace_mechanism`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpkit._checks import check_epsilon, check_finite_array, check_real, check_sensitivity
from dpkit.rng import resolve

__all__ = ["laplace_mechanism", "textbook_laplace_noise"]


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
