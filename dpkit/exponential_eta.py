"""The base-2 privacy parameter of the exponential mechanism (Ilvento 2020): :class:`Eta`.

:func:`dpkit.exponential.base2_exponential_mechanism` weights outcome ``o`` by
``(2**-η)**u(o)``. Ilvento (2020) takes the base ``2**-η = (x·2**-y)**z`` for integers
``x, y, z``, so that every weight with an integer loss is a dyadic rational that gmpy2 (MPFR)
holds exactly. This module holds that parameter: its exact base, its base-e guarantee
``ε = 2·ln(2)·η·⌈Δ⌉`` rounded up (:meth:`Eta.epsilon`), and the largest ``η`` whose
guarantee fits a budget (:meth:`Eta.from_epsilon`), both computed with directed rounding.
It is re-exported by :mod:`dpkit.exponential`, where users import it from.

References
----------
C. Ilvento. *Implementing the Exponential Mechanism with Base-2 Differential Privacy.*
ACM CCS 2020.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._checks import check_epsilon, check_integer, check_sensitivity
from dpkit._exact import describe
from dpkit._samplers import base2

__all__ = ["MAX_BASE_EXPONENT", "Eta"]

#: Largest binary exponent ``y·z`` of the base ``2**-η = x**z / 2**(y·z)`` :class:`Eta`
#: accepts (the base then has at most 2**20 bits).
MAX_BASE_EXPONENT = 1 << 20


def _effective_sensitivity(sensitivity: Any) -> int:
    """``⌈Δ⌉``, exactly: the sensitivity of the loss after randomized rounding to integers.

    The ceiling is taken of the exact value (a ``Fraction`` or long double just above an
    integer is not rounded down to it first).
    """
    try:
        check_sensitivity(sensitivity, rounding="up")  # validates; the ceiling is exact below
    except OverflowError:
        raise ValueError(f"sensitivity must be a finite number > 0 that a double can hold, "
                         f"got {sensitivity!r}") from None
    if isinstance(sensitivity, numbers.Rational):   # Python ints: np.int64 would wrap later
        return math.ceil(Fraction(int(sensitivity.numerator), int(sensitivity.denominator)))
    if isinstance(sensitivity, np.floating):
        return int(np.ceil(sensitivity))               # in the value's own precision
    return math.ceil(float(sensitivity))


def _epsilon_down(epsilon: Any) -> float:
    """The budget as the largest double not above its exact value (safe for a mechanism)."""
    return check_epsilon(epsilon, rounding="down")


@dataclass(frozen=True)
class Eta:
    """A base-2 privacy parameter ``η`` with ``2**-η = (x · 2**-y)**z`` exactly.

    The base-2 exponential mechanism weights outcome ``o`` by ``(2**-η)**u(o)``; choosing
    ``2**-η`` as a power of the dyadic rational ``x·2**-y`` makes every weight exactly
    representable in binary. ``η = -z·log2(x·2**-y) = z·(y - log2 x) > 0``.

    Parameters
    ----------
    x : int
        Numerator, ``1 ≤ x < 2**y``.
    y : int
        Binary exponent of the denominator, ``y ≥ 1``.
    z : int
        Power, ``z ≥ 1`` (default 1).

    Raises
    ------
    TypeError
        If ``x``, ``y`` or ``z`` is not an integer.
    ValueError
        If they are out of range: ``x·2**-y`` must lie in ``(0, 1)`` and the base's binary
        exponent ``y·z`` must be at most :data:`MAX_BASE_EXPONENT` (``2**20``).

    Examples
    --------
    >>> Eta(1, 1).eta            # base 1/2
    1.0
    >>> Eta.from_epsilon(1.0).epsilon() <= 1.0
    True
    """

    x: int
    y: int
    z: int = 1

    def __post_init__(self) -> None:
        # y and z first: x's range 2**y must not be built for a huge y (MemoryError).
        y = check_integer(self.y, "y", minimum=1)
        z = check_integer(self.z, "z", minimum=1, maximum=MAX_BASE_EXPONENT)
        if y * z > MAX_BASE_EXPONENT:
            raise ValueError(f"y·z must be at most 2**20 = {MAX_BASE_EXPONENT} (the base "
                             f"2**-η = x**z / 2**(y·z) would need more bits), got "
                             f"y={describe(y)}, z={describe(z)}")
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "z", z)
        object.__setattr__(self, "x", check_integer(self.x, "x", minimum=1,
                                                    maximum=(1 << y) - 1))

    # -- exact representation ----------------------------------------------------------

    @property
    def base(self) -> Fraction:
        """The base ``2**-η = (x / 2**y)**z`` as an exact fraction."""
        return Fraction(self.x, 1 << self.y) ** self.z

    def reduced(self) -> tuple[int, int]:
        """Return ``(X, Y)`` with ``2**-η = X / 2**Y`` and ``X`` odd (lowest terms)."""
        numerator, exponent = self.x ** self.z, self.y * self.z
        shift = (numerator & -numerator).bit_length() - 1   # trailing zero bits
        return numerator >> shift, exponent - shift

    @property
    def eta(self) -> float:
        """``η`` as a float (for display; the mechanism uses the exact base)."""
        return self.z * (self.y - math.log2(self.x))

    # -- privacy ------------------------------------------------------------------------

    def epsilon(self, sensitivity: Any = 1) -> float:
        """The base-e privacy guarantee ``ε = 2·ln(2)·η·Δ`` of the base-2 exponential mechanism.

        The mechanism with base ``2**-η`` on a loss of sensitivity ``Δ`` is ``2ηΔ``-DP in
        base 2 (the proof of Dwork & Roth 2014, Theorem 3.10, with base 2 in place of e, as
        in Ilvento 2020, Section 4), i.e. ``e**ε`` bounds every probability ratio with
        ``ε = 2·ln(2)·η·Δ``. The mechanism rounds losses to integers at random, after which
        the loss's sensitivity is ``⌈Δ⌉``; so ``Δ`` is rounded up to an integer here (no
        change for integer ``Δ``, the usual case).

        Parameters
        ----------
        sensitivity : float
            Sensitivity ``Δ > 0`` of the loss (default 1).

        Returns
        -------
        float
            ``ε``, rounded up (computed with 128-bit directed rounding).

        Raises
        ------
        TypeError, ValueError
            If ``sensitivity`` is not a finite number > 0, or so large that ``ε`` exceeds
            the largest float.
        """
        epsilon = _epsilon_upper(*self.reduced(), _effective_sensitivity(sensitivity))
        if not math.isfinite(epsilon):
            raise ValueError(f"sensitivity={sensitivity!r} is too large for {self}: "
                             f"epsilon = 2·ln(2)·η·⌈sensitivity⌉ exceeds the largest float")
        return epsilon

    @classmethod
    def from_epsilon(cls, epsilon: Any, sensitivity: Any = 1, *, bits: int = 10) -> Eta:
        """The largest ``η = Eta(x, y, 1)`` whose guarantee does not exceed ``epsilon``.

        The target is ``η* = ε / (2·ln 2·⌈Δ⌉)``. ``y`` is fixed to
        ``bits + max(0, ⌈η*⌉, ⌈-log2 η*⌉)`` so that the base ``x·2**-y`` has about ``bits``
        significant bits whatever ``ε``; ``x`` is then the smallest integer (largest ``η``)
        with ``Eta(x, y).epsilon(Δ) ≤ ε``, checked with the same upward-rounded
        computation as :meth:`epsilon`. The result is in lowest terms (``x`` odd). Larger
        ``bits`` wastes less of the budget but makes exact arithmetic costlier (the
        full-precision sampler needs about ``y`` bits per unit of the utility range).

        Parameters
        ----------
        epsilon : float
            The base-e privacy budget ``ε > 0``. A ``Fraction`` or long double is rounded
            *down* to a double, so the guarantee never exceeds the exact budget.
        sensitivity : float
            Sensitivity ``Δ > 0`` of the loss (default 1); its ceiling is taken exactly.
        bits : int
            Resolution of the base, ``1 ≤ bits ≤ 64`` (default 10: ``η`` falls short of
            ``η*`` by a relative ``≲ 2**-bits / (η*·ln 2)``).

        Returns
        -------
        Eta
            With ``eta.epsilon(sensitivity) ≤ epsilon``.

        Raises
        ------
        TypeError, ValueError
            If ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``bits`` is
            not an integer in [1, 64], or ``epsilon`` is so large or small that the base
            would need more than 2**20 bits.
        """
        epsilon = _epsilon_down(epsilon)
        delta = _effective_sensitivity(sensitivity)
        bits = check_integer(bits, "bits", minimum=1, maximum=64)
        x, y = _base_from_epsilon(epsilon, delta, bits, sensitivity)
        return cls(x, y, 1)

    def __str__(self) -> str:
        return f"η = {self.eta:.6g} (2^-η = ({self.x}·2^-{self.y})^{self.z})"


def _target_and_exponent(epsilon: float, delta: int, bits: int,
                         sensitivity: Any) -> tuple[float, int]:
    """The target ``η* = ε / (2·ln 2·⌈Δ⌉)`` and the exponent ``y`` of :meth:`Eta.from_epsilon`.

    ``y = bits + max(0, ⌈η*⌉, ⌈-log2 η*⌉)``. A ``ValueError`` (naming ``epsilon`` and the
    ``sensitivity`` as given) if the base would need more than 2**20 bits.
    """
    # log2 of the target η* = ε / (2 ln 2 ⌈Δ⌉), without the float overflow/underflow of
    # the quotient itself (⌈Δ⌉ up to 1.8e308, ε down to 5e-324)
    log2_target = math.log2(epsilon) - math.log2(2 * math.log(2)) - math.log2(delta)
    if log2_target > math.log2(MAX_BASE_EXPONENT - bits):
        raise ValueError(f"epsilon / (2·ln 2·⌈sensitivity⌉) must be at most "
                         f"{MAX_BASE_EXPONENT - bits} for bits={bits} (the base would "
                         f"exceed 2**20 bits), got epsilon={epsilon!r}, "
                         f"sensitivity={sensitivity!r}")
    target = 2.0**log2_target
    y = bits + max(0, math.ceil(target), math.ceil(-log2_target))
    if y > MAX_BASE_EXPONENT:
        raise ValueError(f"epsilon / (2·ln 2·⌈sensitivity⌉) must be at least "
                         f"2**-{MAX_BASE_EXPONENT - bits} for bits={bits} (the base would "
                         f"exceed 2**20 bits), got epsilon={epsilon!r}, "
                         f"sensitivity={sensitivity!r}")
    return target, y


def _base_from_epsilon(epsilon: float, delta: int, bits: int,
                       sensitivity: Any) -> tuple[int, int]:
    """The search of :meth:`Eta.from_epsilon`: ``(x, y)`` in lowest terms (``x`` odd).

    ``x`` is the smallest integer (largest ``η``) with ``_epsilon_upper(x, y, delta) <=
    epsilon``, for ``y`` from :func:`_target_and_exponent`.
    """
    target, y = _target_and_exponent(epsilon, delta, bits, sensitivity)
    # x has about y - η* bits; compute it to 128 bits beyond that, so that the walks below
    # take a step or two (never 2**(y - 53) of them, as when x was rounded to a double).
    with base2.directed_context(128 + y - math.floor(target), gmpy2.RoundUp):
        # 2**y · exp(-ε/2Δ), rounded up: a first x with η at most the target.
        start = gmpy2.mul_2exp(gmpy2.exp(-gmpy2.mpfr(Fraction(epsilon)) / (2 * delta)), y)
    numerator, denominator = start.as_integer_ratio()   # exact, whatever the context
    x = min(max(-(-numerator // denominator), 1), (1 << y) - 1)    # ⌈start⌉, exactly
    while _epsilon_upper(x, y, delta) > epsilon:     # rounding slack: step to safety
        if x == (1 << y) - 1:
            raise ValueError(f"epsilon={epsilon!r} is too small for bits={bits}")
        x += 1
    while x > 1 and _epsilon_upper(x - 1, y, delta) <= epsilon:   # maximality
        x -= 1
    shift = (x & -x).bit_length() - 1
    return x >> shift, y - shift


def _epsilon_upper(x: int, y: int, delta: int) -> float:
    """``2·Δ·(y·ln 2 - ln x)`` (that is ``2 ln2 η Δ`` for base ``x/2**y``), rounded up.

    For a base ``x/2**y >= 1/2`` the difference cancels (``η`` can be ``2**-2000`` and
    smaller); it is then computed as ``-log1p(-(2**y - x)/2**y)``, with no cancellation.
    """
    if x >= 1 << (y - 1):
        with base2.directed_context(128, gmpy2.RoundDown):
            # the argument rounded down, then log1p rounded down: a lower bound on ln(x/2**y)
            log_base = gmpy2.log1p(gmpy2.mul_2exp(gmpy2.mpfr(x - (1 << y)), -y))
        with base2.directed_context(128, gmpy2.RoundUp):
            value = -2 * delta * log_base
    else:
        with base2.directed_context(128, gmpy2.RoundDown):
            log_x = gmpy2.log(x)
        with base2.directed_context(128, gmpy2.RoundUp):
            value = 2 * delta * (y * gmpy2.const_log2() - log_x)
    context = gmpy2.ieee(64)
    context.round = gmpy2.RoundUp
    with context:
        return float(gmpy2.mpfr(value))
