"""The base-2 exponential mechanism, sampled exactly (Ilvento 2020).

The exponential mechanism (McSherry & Talwar 2007) picks an outcome ``o`` with probability
proportional to ``exp(-ε·u(o)/(2Δ))`` for a *loss* ``u`` (lower is better) of sensitivity
``Δ``. Implemented with floating point, those weights underflow to zero and vanish when
added to larger ones, and the attacks in :mod:`dpkit.attacks.exponential` turn this into
unbounded privacy loss. Ilvento (2020) removes floating point from the mechanism:

* the base ``e**(-ε/2Δ)`` is replaced by ``2**-η`` with ``2**-η = (x·2**-y)**z`` for
  integers ``x, y, z`` (:class:`Eta`), so every weight ``2**(-η·u)`` with integer ``u`` is a
  dyadic rational that gmpy2 (MPFR) can hold exactly;
* the mechanism is then ``2ηΔ``-DP *in base 2*, i.e. ``ε = 2·ln(2)·η·Δ`` in base e
  (:meth:`Eta.epsilon`);
* losses are clamped to public bounds and non-integer losses are rounded at random to an
  adjacent integer (which costs no privacy when ``Δ`` is an integer);
* the precision that makes every operation exact is fixed from public quantities only
  (:func:`compute_precision`), any inexact operation raises
  (:class:`InexactArithmeticError`), and the normalised draw uses no division.

:func:`base2_exponential_mechanism` offers two samplers with the *same, exact* output
distribution (:func:`probabilities`): ``method="full"`` is the paper's full-precision
algorithm, ``Θ(n²)`` bit operations per draw for ``n`` outcomes with ``u(o) = o``;
``method="fast"`` (the default) decides the draw with rigorous floating-point bounds, then,
when the random point lands within about ``n·2**-52`` of a boundary, with exact sums of
96-bit fixed-point bounds, and falls back to higher precision — ultimately the exact
arithmetic — only when those leave it open (probability below ``8n²·2**-96``), ``O(n)``
expected time. See :mod:`dpkit._samplers.base2` for both.

References
----------
C. Ilvento. *Implementing the Exponential Mechanism with Base-2 Differential Privacy.*
ACM CCS 2020. F. McSherry and K. Talwar. *Mechanism Design via Differential Privacy.*
FOCS 2007.
"""

from __future__ import annotations

import itertools
import math
import numbers
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from dpkit._checks import (
    as_array,
    check_bounds,
    check_finite_array,
    check_integer,
    check_shape,
)
from dpkit._samplers import base2
from dpkit._samplers.base2 import InexactArithmeticError
from dpkit._samplers.fixed_point import fallback_bound
from dpkit.exponential_eta import MAX_BASE_EXPONENT as MAX_BASE_EXPONENT
from dpkit.exponential_eta import Eta
from dpkit.rng import RandomSource, resolve
from dpkit.timing import Cost, Deadline, kind_of, run_padded, warm_up_with

__all__ = [
    "DEFAULT_MAX_PRECISION",
    "MAX_BASE_EXPONENT",
    "MAX_PROBABILITY_BITS",
    "Eta",
    "InexactArithmeticError",
    "base2_exponential_mechanism",
    "compute_precision",
    "probabilities",
]

#: Largest precision (bits per number) :func:`compute_precision` accepts by default, and the
#: largest :func:`base2_exponential_mechanism` accepts at all: 2**27 bits is 16 MiB per MPFR
#: number, and one exact operation at that size takes a good fraction of a second.
DEFAULT_MAX_PRECISION = 1 << 27
#: Largest ``Y·K·2**m`` :func:`probabilities` accepts (``2**-η = X/2**Y``, ``K`` the span
#: of the utility bounds, ``m`` the number of non-integer utilities): the exact fractions'
#: normalisation costs grow about quadratically with it (a few seconds at this limit).
MAX_PROBABILITY_BITS = 1 << 20
_MAX_RANGE = 1 << 53        # utility bounds and their spread must be exact in a double
_METHODS = ("fast", "full", "search")
#: Losses rounded per block by :func:`_rounded_offsets`: its temporaries of 64 KiB stay in
#: cache and below glibc's ``mmap`` threshold (blocks of ``2**16`` took 2.8 times the CPU
#: time at ``10**5`` outcomes, faulting fresh pages in at every call).
_ROUNDING_BLOCK = 1 << 13

#: The worst cost of :func:`base2_exponential_mechanism` per method (see
#: :mod:`dpkit.timing`; ``benchmarks/deadlines.py``), per outcome, and for ``"full"``,
#: ``"search"`` and a ``"fast"`` release not covered by :func:`_common_path` also per
#: 16,384 bits of precision. The ``"search"`` method's cost grows faster than the number of
#: outcomes when the utilities are spread out: its deadline covers the worst measured up
#: to 1,000.
_PRECISION_UNIT = 16_384  # bits of precision a deadline's cost per outcome covers
#: The ``"full"`` method's work per unit of precision has a share that does not grow with
#: the number of outcomes (the random bits and sums of its normalisation, worth about 60
#: outcomes in ``benchmarks/deadlines.py``): its deadline adds this many outcomes' worth
#: per 16,384 bits of precision, pro rata.
_FULL_FIXED_OUTCOMES = 64
#: ``"fast"`` covers levels 0 and 1 of the sampler: with level 1 forced, the median work of
#: integer losses took 0.45-0.9 of the margin-1 deadline at 2 to 10**6 outcomes (once 1.08),
#: at a load of 13 on 2 cores, with ``fixed`` 9 and ``per_vector_value`` 80, when only the
#: non-integer losses were rounded. Every loss is now rounded (:func:`_rounded_offsets`).
#: Level 1 forced, in one process (load 6, CPU time, medians): any losses (integer,
#: fractional, negative, subnormal) took within 0.75-1.0 of each other, and 1.3, 1.1, 1.1,
#: 2.4, 1.7 and 3.1 times what integer losses rounded as before took, at 1, 64, 10**3,
#: 10**4, 10**5 and 10**6 outcomes. ``fixed`` and ``per_vector_value`` grew by 1.2 (9 to
#: 11, 80 to 96), so that the margin-1 deadline holds that worst with the headroom integer
#: losses had at their tightest size: 0.52, 0.43, 0.41, 0.23 and 0.12 of it at 64 to 10**6
#: outcomes, against 0.55 for integer losses before, at 64. (``benchmarks/deadlines.py
#: --level-1 rounding`` times the kinds of losses side by side, in wall time.)
COSTS = {"fast": Cost(11.0, per_value=0.03, large=1.5, per_vector_value=96.0, per_object=1.2),
         "full": Cost(7.0, per_value=0.1, large=10.0, per_vector_value=800.0, per_object=1.2),
         "search": Cost(5.0, per_value=0.05, large=5.0, per_vector_value=4e3, per_object=1.2)}
#: The largest probability, bounded from public parameters, that a ``"fast"`` release whose
#: deadline covers only its common path (levels 0 and 1) runs past it
#: (:func:`~dpkit._samplers.fixed_point.fallback_bound`): about ``10**8`` outcomes.
MAX_OVERRUN_PROBABILITY = 2.0 ** -40


def _common_path(tables: base2.PowerTables | None, n: int) -> bool:
    """Whether the deadline of a ``"fast"`` release of ``n`` outcomes covers its common path
    only: both level-0 and level-1 tables exist (a base not too close to 1) and the draw
    reaches the MPFR levels with probability at most :data:`MAX_OVERRUN_PROBABILITY`."""
    return tables is not None and tables.direct is not None and tables.fixed is not None \
        and fallback_bound(n) <= MAX_OVERRUN_PROBABILITY


# --------------------------------------------------------------------------------------
# The privacy parameter (the class itself: dpkit.exponential_eta)


def _check_eta(eta: Any) -> Eta:
    if not isinstance(eta, Eta):
        raise TypeError(f"eta must be a dpkit.exponential.Eta, e.g. Eta.from_epsilon(1.0), "
                        f"got {eta!r} of type {type(eta).__name__}")
    return eta


# --------------------------------------------------------------------------------------
# Precision (Ilvento 2020, Algorithm 1)


def _is_exact_double(value: Any) -> bool:
    """Whether the real number ``value`` is exactly a finite float64 (no rounding)."""
    if isinstance(value, (float, np.float64)):
        return math.isfinite(value)
    if isinstance(value, np.floating):                  # float16/32 widen exactly; longdouble?
        return bool(np.isfinite(value)) and np.longdouble(np.float64(value)) == value
    try:
        exact = Fraction(value)
        return abs(exact) < (1 << 1024) and Fraction(float(exact)) == exact
    except (TypeError, ValueError, OverflowError):
        return False


def _show(item: Any) -> str:
    """``repr`` of a value, NumPy integers shown as plain ints, at most 60 characters."""
    text = repr(int(item)) if isinstance(item, np.integer) else repr(item)
    return text if len(text) <= 60 else f"{text[:45]}... ({len(text)} characters)"


def _exact_bound(value: Any, name: str) -> None:
    """Refuse a bound that a double cannot hold exactly (it would be rounded silently)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return                                # check_bounds names the type error
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return                                # check_bounds names the non-finite value
    if not _is_exact_double(value):
        raise ValueError(f"{name} must be a real number within ±2**53 that float64 holds "
                         f"exactly, got {value!r}")


def _utility_range(utility_min: Any, utility_max: Any) -> tuple[float, float, int]:
    """Validate public utility bounds; return them and ``K = ⌈max⌉ - ⌊min⌋``."""
    _exact_bound(utility_min, "utility_min")
    _exact_bound(utility_max, "utility_max")
    low, high = check_bounds(utility_min, utility_max, "utility bounds", strict=False)
    if max(abs(low), abs(high)) >= _MAX_RANGE or math.ceil(high) - math.floor(low) > _MAX_RANGE:
        raise ValueError(f"utility bounds must lie within ±2**53 and span at most 2**53, got "
                         f"utility_min={utility_min!r}, utility_max={utility_max!r}")
    return low, high, math.ceil(high) - math.floor(low)


def compute_precision(utility_min: Any, utility_max: Any, max_outcomes: Any, eta: Eta, *,
                      method: str = "analytic",
                      max_precision: int = DEFAULT_MAX_PRECISION) -> int:
    """The MPFR precision that makes every step of the exact mechanism exact (Algorithm 1).

    The mechanism shifts the rounded losses by the public ``⌊utility_min⌋``, so the
    exponents ``k`` lie in ``[0, K]``, ``K = ⌈utility_max⌉ - ⌊utility_min⌋``, and with
    ``2**-η = X / 2**Y`` in lowest terms every weight ``X**k / 2**(Yk)`` is at most 1 and a
    multiple of ``2**(-YK)``. Any sum of at most ``n = max_outcomes`` weights is then an
    integer multiple of ``2**(-YK)`` below ``2**bitlen(n)``, and the division-free draw
    needs its uniform grid no coarser than ``2**(-YK)`` below a power of two
    ``≤ 2**bitlen(n)``. Hence

    * ``method="analytic"`` (the default): ``p = Y·K + bitlen(n)`` bits, proven sufficient
      for every utility vector, computed in ``O(1)``, and tight to one bit (``n - 1``
      outcomes of loss ``⌊utility_min⌋`` and one of loss ``⌈utility_max⌉`` need
      ``Y·K + bitlen(n - 1)`` bits to sum exactly);
    * ``method="empirical"``: Ilvento's doubling — start at 53 bits and double until the
      worst-case sums ``n·1 + X**k/2**(Yk)``, ``k = 0 … K``, all evaluate without an
      inexact flag. It costs ``O(K)`` exact operations per round and returns up to twice
      the analytic value; it is kept to show the paper's procedure (and tested to never
      return less than the analytic bound).

    Both depend only on public quantities, so whether the mechanism runs — or raises — never
    depends on the data.

    Parameters
    ----------
    utility_min, utility_max : float
        Public bounds of the loss, ``utility_min ≤ utility_max``, within ±2**53.
    max_outcomes : int
        Largest number of outcomes the mechanism will be run on (≥ 1).
    eta : Eta
        The base-2 privacy parameter.
    method : {"analytic", "empirical"}
    max_precision : int
        Refuse precisions above this (default 2**27 bits, 16 MiB per number).

    Returns
    -------
    int
        The precision in bits.

    Raises
    ------
    TypeError, ValueError
        For invalid bounds, ``max_outcomes``, ``eta`` or ``method``.
    InexactArithmeticError
        If the precision needed exceeds ``max_precision``.

    References
    ----------
    Ilvento (2020), Section 5, Algorithm 1.
    """
    _, _, span = _utility_range(utility_min, utility_max)
    n = check_integer(max_outcomes, "max_outcomes", minimum=1)
    eta = _check_eta(eta)
    max_precision = check_integer(max_precision, "max_precision", minimum=2)
    numerator, exponent = eta.reduced()
    if method == "analytic":
        precision = max(exponent * span + n.bit_length(), 2)
    elif method == "empirical":
        precision = _empirical_precision(numerator, exponent, span, n, max_precision)
    else:
        raise ValueError(f"method must be 'analytic' or 'empirical', got {method!r}")
    if precision > max_precision:
        raise InexactArithmeticError(
            f"exact sampling needs {precision} bits of precision for utility range "
            f"[{utility_min}, {utility_max}], {n} outcomes and {eta}, above "
            f"max_precision={max_precision}; narrow the utility bounds or use a coarser eta")
    return precision


def _empirical_precision(numerator: int, exponent: int, span: int, n: int,
                         max_precision: int) -> int:
    """Ilvento's Algorithm 1, empirical variant: double the precision until exact."""
    base = base2.exact_base(numerator, exponent)
    precision = 53
    while True:
        try:
            with base2.exact_context(precision):
                weight = gmpy2.mpfr(1)
                for k in range(span + 1):
                    if k:
                        weight = weight * base
                    gmpy2.mpfr(n) + weight      # the worst-case partial sum
            return precision
        except (gmpy2.InexactResultError, gmpy2.UnderflowResultError):
            precision *= 2
            if precision > max_precision:
                return precision


# --------------------------------------------------------------------------------------
# Utilities: validation, clamping, randomized rounding


def _utilities(utilities: Any) -> np.ndarray:
    """Validate losses: a non-empty 1-d array of finite reals, each exact as a double.

    Values float64 cannot hold exactly (large ints, non-dyadic fractions, long doubles with
    extra bits) are refused rather than rounded, and so are booleans, even inside a list.
    A plain 1-d float64 array of finite values is returned as it is (the mechanism only
    reads it), saving the copy :func:`~dpkit._checks.check_finite_array` would make;
    anything else, and any non-finite value, goes through that function and its messages.
    """
    if type(utilities) is np.ndarray and utilities.dtype == np.float64 \
            and utilities.ndim == 1 and utilities.size and all(
                np.isfinite(utilities[start:start + base2.BLOCK]).all()
                for start in range(0, utilities.size, base2.BLOCK)):
        return utilities
    if isinstance(utilities, (list, tuple)):
        for i, item in enumerate(utilities):
            if isinstance(item, (bool, np.bool_)):
                raise TypeError(f"utilities must hold real numbers, not booleans; "
                                f"utilities[{i}] = {item!r}")
            if isinstance(item, (int, np.integer)) and abs(int(item)) > 2**53:
                _refuse_inexact(item, i)            # NumPy would round it beside a float
    array = utilities if isinstance(utilities, (np.ndarray, str, bytes)) else \
        as_array(utilities, "utilities")
    if isinstance(array, np.ndarray) and (array.dtype == object or array.dtype.kind in "iu"
                                          or array.dtype == np.longdouble):
        items = array.ravel()
        indices = range(items.size)
        if array.dtype.kind in "iu":        # only magnitudes from 2**53 up can be inexact
            indices = np.flatnonzero(np.abs(items.astype(np.float64)) >= 2.0 ** 53)
        for index in indices:
            if isinstance(items[index], numbers.Real):
                _refuse_inexact(items[index], index)
    return check_finite_array(array, "utilities", ndim=1)


def _refuse_inexact(item: numbers.Real, index: int) -> None:
    """Refuse ``utilities[index] = item`` unless it is exactly a double (booleans pass here:
    they are refused, or read as 0 and 1, by the caller)."""
    if not isinstance(item, (bool, np.bool_)) and not _is_exact_double(item):
        raise ValueError(f"utilities must be exactly representable as float64; "
                         f"utilities[{index}] = {_show(item)} is not (scale the loss to a "
                         f"grid of doubles, e.g. integers below 2**53, instead)")


def _rounded_offsets(values: np.ndarray, low: float, high: float,
                     rng: RandomSource) -> np.ndarray:
    """Clamp, round at random (up with probability equal to the fractional part), shift.

    Every loss is rounded the same way, integer or not, block by block
    (:data:`_ROUNDING_BLOCK` at a time): the clamped value ``ũ`` is split into the
    magnitude's integer part ``⌊|ũ|⌋`` and its part ``f = |ũ| - ⌊|ũ|⌋``, a double in
    ``[0, 1)`` computed exactly, and ``|ũ|`` is rounded away from zero with probability
    ``f`` (:func:`~dpkit._samplers.base2.bernoulli_dyadic`, 64 random bits per loss; ``f = 0``
    for an integer, never rounded); the sign is put back. For ``ũ ≥ 0`` this rounds up with
    probability ``ũ - ⌊ũ⌋``; for ``ũ < 0`` it rounds down with probability
    ``|ũ| - ⌊|ũ|⌋ = ⌈ũ⌉ - ũ``, i.e. up with probability ``ũ - ⌊ũ⌋`` too: the same law,
    with a part that is always a double (that of ``ũ`` itself is not for some negative
    values: ``1 - 0.1`` needs 55 bits). The work is the same passes, the same calls and the
    same ``8n`` random bytes whatever the values (a tie of 64 bits, probability below
    ``2**-64`` per loss, draws a few more); the result is the rounded offsets from
    ``⌊low⌋`` minus their minimum, so the largest weight is 1: int32 when the public span
    ``⌈high⌉ - ⌊low⌋`` is below ``2**31`` (halving the memory traffic), else int64.
    """
    n = values.size
    origin = math.floor(low)
    narrow = math.ceil(high) - origin < 1 << 31         # offsets, even rounded up, fit
    offsets = np.empty(n, dtype=np.int32 if narrow else np.int64)
    clamped, whole = np.empty(min(n, _ROUNDING_BLOCK)), np.empty(min(n, _ROUNDING_BLOCK))
    for start in range(0, n, _ROUNDING_BLOCK):
        part = values[start:start + _ROUNDING_BLOCK]
        signed = np.clip(part, low, high, out=clamped[:part.size])
        magnitude = np.abs(signed)
        floor = np.floor(magnitude, out=whole[:part.size])
        magnitude -= floor                                 # f: exact, in [0, 1)
        floor += base2.bernoulli_dyadic(magnitude, rng)    # exact: below 2**53
        np.copysign(floor, signed, out=floor)
        np.subtract(floor, origin, out=offsets[start:start + part.size],
                    casting="unsafe")                      # exact: integers within 2**53
    offsets -= offsets.min()
    return offsets


# --------------------------------------------------------------------------------------
# The mechanism


def base2_exponential_mechanism(utilities: Any, eta: Eta, *, utility_min: Any,
                                utility_max: Any, rng: Any = None, method: str = "fast",
                                precision: Any = None, max_outcomes: Any = None) -> int:
    """Return the index of an outcome drawn by the base-2 exponential mechanism, exactly.

    Outcome ``i`` is chosen with probability proportional to ``(2**-η)**ũ_i``, where
    ``ũ_i`` is ``utilities[i]`` clamped to ``[utility_min, utility_max]`` and, if not an
    integer, rounded at random to ``⌊ũ⌋`` or ``⌈ũ⌉`` (up with probability equal to the
    fractional part, decided with random bits). Utilities are *losses*: lower is likelier.
    The output distribution is exactly :func:`probabilities`, whichever ``method``.

    Parameters
    ----------
    utilities : array_like of float, shape (n,)
        The loss of each outcome; finite, non-empty; computed from the private data.
    eta : Eta
        Base-2 privacy parameter, e.g. ``Eta.from_epsilon(1.0, sensitivity)``.
    utility_min, utility_max : float
        Public bounds for the loss (never derived from the data); within ±2**53.
    rng : None or RandomSource
        ``None`` (default) uses the secure system source.
    method : {"fast", "full", "search"}
        ``"fast"`` (default): interval bounds with exact fallback, ``O(n)`` expected time.
        ``"full"``: Ilvento's full-precision algorithm (Algorithm 2), ``O(n·p)`` bit
        operations. ``"search"``: the random binary search with a dummy outcome padding the
        total weight to a power of two (Algorithm 3), exact integer arithmetic; it draws
        one random bit at a time and stops as soon as they decide the outcome.
    precision : int, optional
        MPFR precision for the exact arithmetic, in bits; default :func:`compute_precision`
        with the analytic bound. Validated up front, whichever ``method``, from public
        inputs only (whether the call raises never depends on the data): an integer from
        the analytic bound up to :data:`DEFAULT_MAX_PRECISION` (``2**27``). The analytic
        bound already makes every operation exact, so more bits buy no exactness; they
        only cost memory (16 MiB per number at the limit) and time, and the deadline of
        ``"full"`` and ``"search"`` grows with the precision (``2**50`` bits would make a
        release wait for months; ``"fast"``'s covers its common path only). The
        limit is the one the analytic bound itself must meet.
    max_outcomes : int, optional
        Public maximum number of outcomes used to fix the precision (default ``n``).

    Returns
    -------
    int
        Index of the chosen outcome.

    Raises
    ------
    TypeError, ValueError
        For NaN or infinite utilities, an empty outcome set, ``utility_min > utility_max``,
        an ``eta`` that is not an :class:`Eta`, utilities or bounds that float64 cannot
        hold exactly, a bad ``method``, or a ``precision`` that is not an integer in
        ``[analytic bound, DEFAULT_MAX_PRECISION]``.
    InexactArithmeticError
        If the analytic precision exceeds :data:`DEFAULT_MAX_PRECISION` (a property of the
        public inputs, which an explicit ``precision`` cannot lift), or, as a last line of
        defence, if an exact computation would be rounded. Never caught: the mechanism
        returns a sample computed exactly or nothing.

    Notes
    -----
    **Privacy.** If the loss has sensitivity ``Δ`` (an integer), the mechanism is
    ``2ηΔ``-DP in base 2, i.e. ``eta.epsilon(Δ) = 2·ln(2)·η·Δ``-DP (McSherry & Talwar
    2007; Dwork & Roth 2014, Theorem 3.10, in base 2 as in Ilvento 2020). Clamping to
    public bounds does not raise the sensitivity, and randomized rounding costs nothing:
    rounding ``u`` up with probability ``frac(u)`` has the law of ``⌊u + U⌋`` for a
    uniform ``U``; for fixed ``U`` the rounded loss still has sensitivity ``Δ``, and a
    mixture of private mechanisms over a data-independent ``U`` is private. For a
    non-integer ``Δ`` the guarantee holds with ``⌈Δ⌉``.

    **Timing.** The randomized rounding does the same work whatever the utilities: every
    one, integer or not, is rounded with the same vectorised passes and 64 random bits
    (an integer's coin has probability 0), so the same calls run and the same ``8n`` bytes
    are read from ``rng`` (a tie of 64 bits, probability below ``2**-64`` per utility,
    draws a few more). The sampling's work depends on the data (as in the paper's
    implementation): the number of rejection rounds, the fast method's rare fallback
    levels, and the cost of the exact arithmetic all depend on the rounded utilities. The
    call therefore ends at a deadline set by the number of outcomes ``n``,
    the method and whether ``utilities`` is a float64 array (:mod:`dpkit.timing`), which
    covers the worst cost measured. For ``"full"`` and ``"search"``, and for ``"fast"``
    with a base too close to 1 (``η`` below about 0.016) or more than about ``10**8``
    outcomes, it covers the exact arithmetic too, so it grows with the precision as well
    (about as ``n²`` for losses spanning ``[0, n - 1]``). Otherwise the ``"fast"`` deadline
    covers the sampler's common path only, levels 0 and 1 of
    :func:`~dpkit._samplers.base2.fast_sample`, linear in ``n`` (0.33 s at ``10**6``
    outcomes on a 2-core machine under load, where it had been 92 s); a draw that
    reaches the MPFR or exact levels runs past it, ends late and is counted by
    :func:`dpkit.timing.overruns`. That happens
    with probability at most ``p = (n - 1)·(2**-319 + (8n + 1)·2**-96)`` whatever the
    utilities (:func:`~dpkit._samplers.fixed_point.fallback_bound`, proof there: 1.0e-16 at
    ``10**6`` outcomes, below ``2**-40`` up to about ``10**8``), and a late end shows that
    it happened: the release together with its end time is ``(ε, (1 + e**ε)·p)``-DP
    (Ratliff & Vadhan 2024 count the running time as output in this way). A call whose
    work outlasts the deadline for other reasons (a loaded machine) ends late too and is
    counted the same way. The number of outcomes is
    treated as **public**, as the outcome set of an exponential mechanism is (the
    candidates are fixed before the data is scored; only their losses are private): a
    caller whose number of candidates depends on the data must first pad the outcome set
    to a public size. Nothing else about the
    utilities enters the deadline — not how many are distinct, their magnitudes, or
    which are ints and which floats in a list — and the precision and every error
    condition depend only on public inputs. The fast method's tables of powers are built
    from ``eta`` and the bounds before the clock starts, so no release builds one.
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    # Public parameters, validated and prepared before the clock starts: the fast
    # sampler's tables of powers depend on eta and the bounds only (never on which
    # tables an earlier release happened to build, which the data decided).
    eta = _check_eta(eta)
    low, high, span = _utility_range(utility_min, utility_max)
    if precision is not None:
        precision = check_integer(precision, "precision", minimum=2,
                                  maximum=DEFAULT_MAX_PRECISION)
    tables = base2.power_tables(*eta.reduced(), span) if method == "fast" else None
    return run_padded(COSTS[method], _base2_exponential_mechanism_work, utilities, eta,
                      low, high, rng, method, precision, max_outcomes, tables)


def _base2_exponential_mechanism_work(clock: Deadline, utilities: Any, eta: Eta, low: float,
                                      high: float, rng: Any, method: str,
                                      precision: int | None, max_outcomes: Any,
                                      tables: base2.PowerTables | None) -> Any:
    """The work of :func:`base2_exponential_mechanism`, inside its deadline: its temporaries are
    freed before the wait (:func:`dpkit.timing.run_padded`)."""
    source = resolve(rng)
    n = check_shape(utilities, "utilities", ndim=1).size   # public: declared before any value
    outcomes = n if max_outcomes is None else check_integer(max_outcomes, "max_outcomes",
                                                             minimum=n)
    bits = _checked_precision(precision, low, high, outcomes, eta)   # public inputs only
    if method == "fast" and _common_path(tables, n):
        size = n      # levels 0 and 1; the rare MPFR and exact levels run past it
    else:
        size = n * -(-bits // _PRECISION_UNIT)
    if method == "full":   # its share that grows with the precision alone (public)
        size += -(-_FULL_FIXED_OUTCOMES * bits // _PRECISION_UNIT)
    clock.size(size, kind_of(utilities))
    values = _utilities(utilities)      # an error about a value now waits for the deadline
    numerator, exponent = eta.reduced()
    offsets = _rounded_offsets(values, low, high, source)
    if method == "full":
        chosen = base2.full_precision_sample(offsets, numerator, exponent, bits, source)
    elif method == "search":
        chosen = base2.random_binary_search_sample(offsets, numerator, exponent, source)
    else:
        chosen = base2.fast_sample(offsets, numerator, exponent, source, precision=bits,
                                   tables=tables)
    return chosen


def _checked_precision(precision: int | None, low: float, high: float, outcomes: int,
                       eta: Eta) -> int:
    """The exact-arithmetic precision, validated before any data is touched.

    ``None`` gives the analytic bound of :func:`compute_precision` (which raises if it
    exceeds :data:`DEFAULT_MAX_PRECISION`). An explicit ``precision`` (already checked to
    be an integer in ``[2, DEFAULT_MAX_PRECISION]``) must be at least that bound: a smaller
    one can be too small for some utility vectors, and whether it is would depend on the
    data (issue 9, finding 7).
    """
    needed = compute_precision(low, high, outcomes, eta)
    if precision is None:
        return needed
    if precision < needed:
        raise ValueError(f"precision must be at least {needed} bits (the analytic bound "
                         f"for utility bounds [{low:g}, {high:g}], {outcomes} outcomes and "
                         f"{eta}), got {precision}")
    return precision


# --------------------------------------------------------------------------------------
# Exact output distribution


def probabilities(utilities: Any, eta: Eta, *, utility_min: Any = None,
                  utility_max: Any = None, max_rounded: int = 16) -> tuple[Fraction, ...]:
    """The exact output distribution of :func:`base2_exponential_mechanism`, as fractions.

    ``P(i) = E[ b**ũ_i / Σ_j b**ũ_j ]`` with ``b = 2**-η`` and ``ũ`` the clamped losses
    after randomized rounding; the expectation is an exact sum over the ``2**m`` ways of
    rounding the ``m`` non-integer losses.

    Parameters
    ----------
    utilities : array_like of float, shape (n,)
    eta : Eta
    utility_min, utility_max : float, optional
        The clamping bounds (default: the smallest and largest utility, i.e. no clamping).
    max_rounded : int
        Refuse more than this many non-integer utilities (the sum has ``2**m`` terms).
        The weights are exact integers of up to ``Y·K`` bits (``2**-η = X/2**Y``, ``K``
        the span of the bounds) and each of the ``2**m`` roundings normalises them, so
        ``Y·K·2**m`` is limited to :data:`MAX_PROBABILITY_BITS` (``2**20``).

    Returns
    -------
    tuple of fractions.Fraction
        One probability per outcome; they sum to exactly 1.

    Raises
    ------
    TypeError, ValueError
        As :func:`base2_exponential_mechanism`, if more than ``max_rounded`` utilities
        are not integers, or if ``Y·K·2**m`` exceeds :data:`MAX_PROBABILITY_BITS` (for
        example ``probabilities([-2.0**40, 0], Eta(1, 1))``, whose weights would need
        ``2**40`` bits).
    """
    values = _utilities(utilities)
    eta = _check_eta(eta)
    low = float(values.min()) if utility_min is None else utility_min
    high = float(values.max()) if utility_max is None else utility_max
    low, high, span = _utility_range(low, high)
    max_rounded = check_integer(max_rounded, "max_rounded", minimum=0)
    clamped = [Fraction(float(value)) for value in np.clip(values, low, high)]
    base = [math.floor(value) for value in clamped]
    fractional = [i for i, value in enumerate(clamped) if value != base[i]]
    if len(fractional) > max_rounded:
        raise ValueError(f"utilities has {len(fractional)} non-integer values; exact "
                         f"probabilities enumerate 2**m roundings, max_rounded={max_rounded}")
    numerator, exponent = eta.reduced()
    if exponent * span << len(fractional) > MAX_PROBABILITY_BITS:
        raise ValueError(f"the utility range [{low:g}, {high:g}] (utility_min, utility_max, "
                         f"by default the utilities' own range) is too wide for exact "
                         f"probabilities with {eta} and {len(fractional)} non-integer "
                         f"utilities: Y·K·2**m = {exponent}·{span}·2**{len(fractional)} bits "
                         f"of exact fractions, above MAX_PROBABILITY_BITS = "
                         f"{MAX_PROBABILITY_BITS}; narrow the bounds or use a coarser eta")
    chances = [clamped[i] - base[i] for i in fractional]
    # P(i) = Σ_r weight_r · power_r,i / total_r over the roundings r, with integer powers
    # b**(k - lowest) · 2**(exponent·(highest - k)) (a common factor that cancels in each
    # share). Summed over one common denominator, the lcm of the terms' denominators, in
    # integers: adding 2**m Fractions one by one would reduce ever longer ones at each step.
    lowest, highest = min(base), max(base) + 1
    powers = {k: numerator ** (k - lowest) << (exponent * (highest - k))
              for k in {*base, *(base[i] + 1 for i in fractional)}}
    terms = []
    for ups in itertools.product((0, 1), repeat=len(fractional)):
        weight = Fraction(1)
        exponents = list(base)
        for i, up, chance in zip(fractional, ups, chances, strict=True):
            exponents[i] += up
            weight *= chance if up else 1 - chance
        shares = [powers[k] for k in exponents]
        terms.append((weight.numerator, weight.denominator * sum(shares), shares))
    common = math.lcm(*(denominator for _, denominator, _ in terms))
    totals = [0] * len(base)
    for weight, denominator, shares in terms:
        factor = weight * (common // denominator)
        for i, share in enumerate(shares):
            totals[i] += factor * share
    reduced = {total: Fraction(total, common) for total in set(totals)}  # few distinct
    return tuple(reduced[total] for total in totals)


def _warm_up(utilities: Any, rng: Any) -> None:
    """Every method of :func:`base2_exponential_mechanism` on ``utilities`` (a warm-up), and
    level 1 of the fast sampler, which its deadline covers but which runs only when level 0
    leaves a draw open (rarely, and how rarely depends on the data): cold at its first use,
    it would overrun. A scalar (the light re-warm's value, :mod:`dpkit._warming`) is
    released as two outcomes of that utility, by the default method only: the mechanism
    refuses a scalar before its clock, and a refusal would warm nothing (review 27)."""
    methods = _METHODS
    if np.ndim(utilities) == 0:
        utilities, methods = np.full(2, utilities), ("fast",)
    for method in methods:
        base2_exponential_mechanism(utilities, _WARM_UP_ETA, utility_min=0, utility_max=8,
                                    method=method, rng=rng)
    x, y = _WARM_UP_ETA.reduced()
    base2.fast_sample(np.arange(9), x, y, resolve(rng), start="fixed",
                      precision=compute_precision(0, 8, 9, _WARM_UP_ETA),
                      tables=base2.power_tables(x, y, 8))


_WARM_UP_ETA = Eta(3, 2)  # 2**-η = 3/4
warm_up_with(_base2_exponential_mechanism_work, _warm_up)
