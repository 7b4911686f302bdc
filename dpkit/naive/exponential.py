"""The textbook floating-point exponential mechanism: **unsafe, never use it to release data**.

:func:`exponential_mechanism` is the version found in lecture notes and blog posts, written
with NumPy: weights ``exp(-ε·u/2)`` for a loss ``u`` of sensitivity 1, normalised by
dividing by their sum, accumulated, and compared with a float uniform. Two properties of
floating point break its privacy (Ilvento 2020, Section 3):

* **underflow**: ``exp(-t)`` is exactly ``0.0`` for ``t > 745.13``, so an outcome whose loss
  exceeds ``1490.3/ε`` can never be chosen, however close its loss is to its neighbours';
* **absorption**: ``1.0 + w == 1.0`` for ``w < 2**-53``, so small normalised weights added
  after a large one vanish from the cumulative sums and their outcomes become impossible.

Either turns a probability that the mathematics makes positive into exactly zero, and a
ratio of probabilities between neighbouring inputs into infinity:
:mod:`dpkit.attacks.exponential` exploits both. The safe version is
:func:`dpkit.exponential.base2_exponential_mechanism`.

:func:`exponential_mechanism_probabilities` computes the exact output distribution of this
float code (it is a deterministic function of a 53-bit uniform), which makes the zeros
visible without sampling.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_epsilon, check_finite_array, check_integer, check_sensitivity
from dpkit.rng import resolve

__all__ = ["exponential_mechanism", "exponential_mechanism_probabilities",
           "report_noisy_max"]

_GRID = 1 << 53     # the float uniform is a multiple of 2**-53


def _cumulative(utilities: Any, epsilon: Any) -> np.ndarray:
    """The float cumulative probabilities of the textbook code (shared by both functions)."""
    u = check_finite_array(utilities, "utilities", ndim=1)
    epsilon = check_epsilon(epsilon)
    weights = np.exp(-epsilon * u / 2)          # underflows to 0.0 past 745.13
    total = weights.sum()
    if total == 0.0:
        # Textbook Python code divides 0.0 by 0.0 here and stops with ZeroDivisionError.
        raise ZeroDivisionError("every weight exp(-epsilon*u/2) underflowed to 0.0: the "
                                "naive mechanism cannot normalise them")
    return np.cumsum(weights / total)           # small terms are absorbed


def exponential_mechanism(utilities: Any, epsilon: Any, rng: Any = None) -> int:
    """UNSAFE: the classic floating-point exponential mechanism. For teaching only.

    Returns index ``i`` with probability *intended* to be proportional to
    ``exp(-ε·u_i/2)``, written as textbooks do::

        weights = np.exp(-epsilon * u / 2)       # loss u of sensitivity 1
        probabilities = weights / weights.sum()
        cumulative = np.cumsum(probabilities)
        r = uniform float in [0, 1)
        return first i with r < cumulative[i]    (the last index if none: round-off)

    Parameters
    ----------
    utilities : array_like of float, shape (n,)
        Losses (lower is likelier) of sensitivity 1.
    epsilon : float
        The privacy parameter the code *claims*.
    rng : None or RandomSource
        Source of the float uniform (secure by default).

    Returns
    -------
    int

    Raises
    ------
    TypeError, ValueError
        For invalid ``utilities`` or ``epsilon``.
    ZeroDivisionError
        If every weight underflows (as the Python original would).

    Notes
    -----
    **Privacy: none in general.** Underflow and absorption make some outcomes impossible
    on one input and possible on a neighbouring one, an infinite privacy loss
    (:func:`dpkit.attacks.zero_rounding_attack`,
    :func:`dpkit.attacks.truncated_addition_attack`). Two plausible slips (easy to make,
    hard to spot in review; not taken from any particular source) would make it worse and
    are *not* reproduced here: writing ``exp(-epsilon * u / 2)`` when the loss has
    sensitivity ``Δ ≠ 1`` (the exponent must be ``-ε·u/(2Δ)``, and
    ``epsilon * u / 2 * sensitivity`` multiplies by ``Δ`` instead of dividing), and a
    misplaced parenthesis in the cumulative weights, ``c = (c + w) / total`` instead of
    ``c = c + w / total``, which divides the running sum again at every step.

    References
    ----------
    Ilvento (2020), Section 3; McSherry & Talwar (2007).
    """
    cumulative = _cumulative(utilities, epsilon)
    r = resolve(rng).uniform()
    return min(int(np.searchsorted(cumulative, r, side="right")), cumulative.size - 1)


def exponential_mechanism_probabilities(utilities: Any, epsilon: Any) -> tuple[Fraction, ...]:
    """The exact output distribution of :func:`exponential_mechanism` (the float code).

    The code returns the number of cumulative values ``c_j ≤ r`` (capped at ``n - 1``) for
    ``r = m·2**-53`` with ``m`` uniform in ``[0, 2**53)``, so
    ``P(i) = (#{m : m·2**-53 < c_i} - #{m : m·2**-53 < c_{i-1}}) / 2**53``, and the last
    outcome also receives the mass above ``c_{n-1}``. This is what the float code really
    does — not what its comments promise.

    Parameters
    ----------
    utilities : array_like of float, shape (n,)
    epsilon : float

    Returns
    -------
    tuple of fractions.Fraction
        Exact probabilities (multiples of ``2**-53``) summing to 1.

    Raises
    ------
    TypeError, ValueError, ZeroDivisionError
        As :func:`exponential_mechanism`.
    """
    cumulative = _cumulative(utilities, epsilon)
    below = [min(int(np.ceil(np.ldexp(c, 53))), _GRID) for c in cumulative]   # exact
    below[-1] = _GRID
    counts = np.diff([0, *below])
    return tuple(Fraction(int(c), _GRID) for c in counts)


def report_noisy_max(scores: Any, scale: Any, noise: str = "gumbel", *, size: int = 1,
                     rng: Any = None) -> np.ndarray:
    """Report Noisy Max in floating point: ``argmax_i (s_i + Z_i)``. For illustration only.

    Adds independent noise of the given scale to every score (higher is better) and
    returns the index of the largest noisy score, ``size`` times independently.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Scores (higher is better), sensitivity ``Δ``.
    scale : float
        Noise scale ``b > 0``: ``2Δ/ε`` for an ε-DP release of Δ-sensitive scores.
    noise : {"gumbel", "laplace"}
        Gumbel noise makes the output exactly the exponential mechanism with
        ``ε = 2Δ/b`` (the Gumbel-max trick); Laplace noise gives a different, also ε-DP,
        distribution (Dwork & Roth 2014, Section 3.3).
    size : int
        Number of independent releases.
    rng : None or RandomSource
        Seeds a NumPy generator (float noise: not a safe implementation).

    Returns
    -------
    numpy.ndarray of int, shape (size,)

    Notes
    -----
    **Unsafe as a release mechanism**: the noise comes from NumPy's float samplers, with the
    floating-point weaknesses the chapter on the Laplace mechanism exploits. It is here to
    compare output distributions, not to release data.

    Examples
    --------
    >>> from dpkit.rng import seeded
    >>> report_noisy_max([0.0, 100.0, 1.0], 1.0, size=3, rng=seeded(0)).tolist()
    [1, 1, 1]
    """
    s = check_finite_array(scores, "scores", ndim=1)
    b = check_sensitivity(scale, "scale")              # a finite number > 0
    size = check_integer(size, "size", minimum=1)
    generator = resolve(rng).numpy_generator()
    shape = (size, s.size)
    if noise == "gumbel":
        z = generator.gumbel(0.0, b, shape)
    elif noise == "laplace":
        z = generator.laplace(0.0, b, shape)
    else:
        raise ValueError(f"noise must be 'gumbel' or 'laplace', got {noise!r}")
    return np.argmax(s + z, axis=1)
