"""Fixed-cost discrete Laplace and discrete Gaussian samplers for small requests.

The one-at-a-time samplers of Canonne, Kamath & Steinke (2020) run loops whose length grows
with ``|noise|/scale``, so the running time of a release reveals the noise (they are kept,
labelled, in :mod:`dpkit.naive.laplace`). Requests of up to ``FIXED_MAX = 64`` values (every
scalar release, every SVT threshold) use the samplers here instead: the Bernoulli trials of
one discrete Laplace value are decided one after another by the interval algorithm, from
one uniform of ``B`` bits (:func:`dpkit._samplers.interval.interval_laplace`, ``B = 104`` at
``2**21`` units); those of a round of one discrete Gaussian value (a proposal and its
acceptance) likewise, one uniform of ``B`` bits a round
(:func:`dpkit._samplers.interval_gaussian.interval_gaussian`, ``B = 120`` at the Gaussian
mechanism's ``σ`` of about ``2**40`` units); those of larger requests by comparing 64
random bits with the first 64 bits of each digit's probability
(:func:`dpkit._samplers.bernoulli.fixed_bernoulli`), all digits of all draws at once. The
random bytes drawn and the operations run are the same whatever the values drawn. The
exceptions are events of probability ``<= 2**-64`` per draw, group or digit (a tie), ``<=
e**-64`` per geometric draw (beyond the covered digits) and about ``2**-40`` per Gaussian
proposal (an acceptance the drawn digits cannot decide); they finish exactly, with loops of
their own. See "Timing" in :mod:`dpkit._samplers`.

* :func:`fixed_discrete_laplace`: one value by the interval walk (a zero trial, a sign, a
  geometric magnitude); more as the difference of two geometric variables (no rejection).
* :func:`fixed_discrete_gaussian`: CKS Algorithm 3, a discrete Laplace proposal accepted
  when a standard exponential ``E``, drawn digit by digit, exceeds ``γ(Y)``; proposals are
  decided in rounds of fixed cost.
* :func:`fixed_result`: either sampler run in blocks of ``FIXED_MAX`` values.

References
----------
C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
NeurIPS 2020 (arXiv:2004.00010), Algorithms 2 and 3.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from dpkit._samplers.bernoulli import (
    FixedColumns,
    bernoulli_exp_unchecked,
    bernoulli_matrix,
    fixed_bernoulli,
    fixed_geometric,
    fixed_plan,
)
from dpkit._samplers.bits import mask
from dpkit._samplers.exact import (
    FIXED_MAX,
    MARGIN,
    floor_sqrt,
    logistic_expansion,
    object_ints,
)
from dpkit._samplers.interval import MAX_DIGITS, interval_laplace
from dpkit._samplers.interval_gaussian import interval_gaussian, walks
from dpkit._samplers.tables import public_table
from dpkit.rng import RandomSource


def _gaussian_gamma(y: int, sigma2: Fraction, t: int) -> Fraction:
    """The CKS Algorithm 3 rejection exponent ``(|y| - sigma2/t)**2 / (2 sigma2)``."""
    return (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)
_FIXED_FRACTION_DIGITS = 40  # fractional digits of E drawn for a fixed-cost Gaussian trial


def fixed_discrete_laplace(scale: Fraction, n: int, rng: RandomSource) -> np.ndarray:
    """``n`` exact discrete Laplace draws at a cost that does not depend on their values.

    The difference of two independent geometric variables with ``P[G = g] ∝ p**g`` has
    ``P[X = x] ∝ p**|x|``: no rejection step, so a call of ``n > 1`` values draws exactly
    ``16·n·(I + 1)`` random bytes (:func:`fixed_bernoulli`, 64 bits a digit), bar the events
    named in the module docstring. One value is drawn by the interval algorithm instead
    (:func:`dpkit._samplers.interval.interval_laplace`: one uniform of ``B`` bits for all
    its trials, 104 bits at ``2**21``), at scales whose geometric has at most
    :data:`~dpkit._samplers.interval.MAX_DIGITS` digits: above, the walk would outlast a
    scalar release's deadline (see that module's "Scales").
    """
    plan = fixed_plan(scale)
    if n == 1 and plan[0] <= MAX_DIGITS:
        return interval_laplace(scale, rng)
    g = fixed_geometric(plan, fixed_bernoulli(plan[1], 2 * n, rng), rng)
    return g[:n] - g[n:]


@public_table(maxsize=64)
def _fixed_gaussian_columns(scale: Fraction) -> FixedColumns:
    """The trials of one Gaussian proposal: a geometric of ``scale``, then the digits of ``E``.

    ``E`` is a standard exponential: ``floor(E)`` is geometric with ``p = e**-1`` (digits
    ``i < 7`` cover ``[0, 128)``, the tail ``E >= 128`` has probability ``e**-128``) and
    fractional digit ``k`` is Bernoulli ``1/(1 + e**(2**-k))``, independent of the rest (see
    "Exact exponentials" in :mod:`dpkit._samplers.bernoulli`). Three fields, each in its
    own groups: the geometric and its tail trial, ``floor(E)`` and its tail trial, and the
    fractional digits, last first (trial ``i`` is digit ``40 - i``, weight ``2**i``).
    """
    geometric = fixed_plan(scale)[1].expansions
    whole = fixed_plan(Fraction(1))[1].expansions
    fraction = [logistic_expansion(Fraction(1, 2**k))
                for k in range(_FIXED_FRACTION_DIGITS, 0, -1)]
    return FixedColumns([*geometric, *whole, *fraction],
                        fields=(len(geometric), len(whole), len(fraction)))


class _GaussianSetup:
    """Everything a fixed-cost discrete Gaussian round needs for one ``sigma2``.

    ``weights`` packs a row of trials into (G, floor(E), fractional digits of E) by one
    integer matrix product (tail columns weigh 0; they are checked separately); it is None
    when the geometric may not fit in int64 (``I > 61``).
    """

    def __init__(self, sigma2: Fraction) -> None:
        self.t = floor_sqrt(sigma2) + 1
        self.plan = fixed_plan(Fraction(self.t))
        self.columns = _fixed_gaussian_columns(Fraction(self.t))
        self.whole_top = fixed_plan(Fraction(1))[0]
        top = self.plan[0]
        self.width = top + 1
        self.tails = np.array([top, self.width + self.whole_top])
        self.constants = _gamma_constants(sigma2, self.t)
        self.weights = None
        if top <= 61:
            weights = np.zeros((len(self.columns.expansions), 3), dtype=np.int64)
            powers = 2 ** np.arange(top, dtype=np.int64)
            weights[:top, 0] = powers
            weights[self.width:self.width + self.whole_top, 1] = powers[:self.whole_top]
            weights[self.width + self.whole_top + 1:, 2] = 2 ** np.arange(
                _FIXED_FRACTION_DIGITS, dtype=np.int64)
            self.weights = weights


@public_table(maxsize=64)
def _fixed_gaussian_setup(sigma2: Fraction) -> _GaussianSetup:
    return _GaussianSetup(sigma2)


def fixed_discrete_gaussian(sigma2: Fraction, n: int, rng: RandomSource) -> np.ndarray:
    """``n`` exact discrete Gaussian draws, each proposal decided at a value-independent cost.

    CKS Algorithm 3: a proposal is a random sign times a geometric ``G`` of scale ``t =
    floor(σ) + 1`` (``P[G = g] = (1 - e**(-1/t))·e**(-g/t)``, drawn as in
    :func:`fixed_discrete_laplace`), rejected if it is ``(-, 0)`` (which makes it discrete
    Laplace) and otherwise accepted when ``E > γ(Y) = (|Y| - σ²/t)²/(2σ²)``: ``E`` is drawn
    with a fixed number of digits and compared with a float bracket of ``γ``
    (:func:`_gamma_bracket`); a comparison those digits cannot decide (probability about
    ``2**-40``) continues exactly. One value is drawn by the interval algorithm instead
    (:func:`dpkit._samplers.interval_gaussian.interval_gaussian`: one uniform of ``B`` bits
    a round, 120 at the Gaussian mechanism's ``σ``), by the same argument on its rounds, at
    ``σ`` whose proposal has at most ``MAX_DIGITS`` digits (``t < 2**55``: see "Scales" in
    :mod:`dpkit._samplers.interval`).

    Parameters
    ----------
    sigma2 : Fraction
        ``σ²``, > 0 (validated by the caller, :func:`dpkit._samplers.noise.discrete_gaussian`).
    n : int
        The number of draws, >= 1 (at most ``FIXED_MAX`` from the entry points).
    rng : RandomSource
        The source of random bits.

    Returns
    -------
    numpy.ndarray
        ``n`` independent draws with ``P[X = x] ∝ exp(-x²/(2σ²))``: ``int64``, or Python
        ints (``object``) at scales whose proposal has more than 61 digits or after a tail.

    Notes
    -----
    Rounds (every call but one value walked by the interval algorithm). Each round proposes
    ``m = n + 1 + n // 2`` candidates and keeps the accepted ones, in order, up to the
    number still needed; rounds repeat until ``n`` are kept. The work therefore varies with
    the number of rounds ``R`` (each round runs the same operations); ``R`` is independent
    of the values returned and of the data:

    1. *What the rounds show.* The proposals are independent pairs (``A_j`` accepted,
       ``Y_j`` the value), drawn from the public ``σ²`` and ``n`` alone, and given ``A_j =
       1``, ``Y_j`` has the target law whatever the other pairs are. ``R`` is a function of
       the pattern ``(A_j)`` alone (the first round by which ``n`` proposals were
       accepted), and given that pattern the values returned are independent draws from
       the target: they are independent of ``R``. The exact fallbacks (an undecided
       comparison, about ``2**-40`` a proposal; a geometric or ``floor(E)`` beyond its
       digits, ``<= e**-64``) decide the same trials, so they change no law, only the work
       (by the values: see the module docstring). A release padded to a deadline that
       covers its rounds shows nothing of them. One that outlasts its deadline shows its
       unpadded work: the rounds' part of it (``R``) carries nothing about the values or
       the data, the rest is what the deadline hid (the same passes whatever the values
       for a float64 array; a cost that depends on them for Python objects: "Overruns"
       in :mod:`dpkit.timing`).
    2. *The acceptance probability*, exactly. ``P[propose y] = c·e**(-|y|/t)`` for every
       integer ``y``, 0 included (only ``(+, 0)`` proposes it), ``c = (1 - e**(-1/t))/2``;
       times ``P[accept | y] = e**(-γ(y))`` it is ``c·e**(-σ²/(2t²))·e**(-y²/(2σ²))``, the
       cross terms cancelling (``-|y|/t + |y|·(σ²/t)/σ² = 0``: the correctness argument of
       CKS Algorithm 3). A proposal is therefore accepted with probability ``q(σ²) =
       c·e**(-σ²/(2t²))·Θ``, ``Θ = Σ_y e**(-y²/(2σ²)) >= max(1 + 2e**(-1/(2σ²)),
       sqrt(2πσ²))`` (Poisson summation: ``Θ = sqrt(2πσ²)·Σ_k e**(-2π²σ²k²)``): 0.355 at
       ``σ² = 1/4``, 0.435 at 1, 0.641 at 10. ``q`` tends to ``(1 - e**-1)/2 = 0.316`` as
       ``σ → 0`` and to ``sqrt(π/2)·e**(-1/2) = 0.760`` as ``σ → ∞``; it lies in ``[0.76,
       0.7602]`` for every ``σ >= 2**12``.
    3. *The bound.* ``R > K`` exactly when fewer than ``n`` of the first ``K·m`` proposals
       are accepted: ``P[R > K] = P[Bin(K·m, q) < n]``, decreasing in ``q``. The Gaussian
       mechanism's ``σ`` is at least ``2**40`` grid units (about ``2**40`` to ``2**41``:
       :func:`dpkit.gaussian.mechanism_parameters`), where ``P[R > K] <= 2**-64`` for ``K =
       9`` at ``n = 2``, 4 at ``n = 10`` and 2 at ``n = 64`` (at most 9 for every ``n`` from
       2 to 64), and ``K - 1`` rounds would not do; a second round is taken by 4.5% of the
       requests of 2 values, 10.0% of 5 (the most), 6.6% of 10 and 0.93% of 64. A single
       round with a failure probability of ``2**-64`` would need 35 proposals for 2 values
       (4 now) and 153 for 64 (97 now).

    A release's deadline (:mod:`dpkit.timing`) must therefore cover the rounds its requests
    take, not only the first: more rounds make an overrun likelier (at the mechanism's
    ``σ``, 2 values take 3 rounds or more in 0.029% of the requests, 3 values in 0.031%,
    the most).
    ``benchmarks/deadlines.py`` checks the Gaussian mechanism's deadline with this sampler
    as it is (at 2, 3, 5, 10 and 64 values among its sizes), so its percentiles include the
    releases that take a second round (4.5% of those of 2 values, 10.0% of 5); a third round
    (0.029% at 2 values) rarely appears in its default 200 calls a size (``COST`` in
    :mod:`dpkit.gaussian`).
    ``tests/test_breaker35.py`` checks points 1 to 3.

    Privacy
    -------
    As :func:`dpkit._samplers.noise.discrete_gaussian`.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke. *The Discrete Gaussian for Differential Privacy.*
    NeurIPS 2020 (arXiv:2004.00010), Algorithm 3 and its analysis.
    """
    if n == 1 and walks(sigma2):
        return interval_gaussian(sigma2, rng)
    setup = _fixed_gaussian_setup(sigma2)
    t, width = setup.t, setup.width
    out: list[np.ndarray] = []
    need = n
    m = n + 1 + n // 2
    while need > 0:
        packed, bits = _proposals(setup, m, rng)
        negative = (np.frombuffer(rng.read(m), dtype=np.uint8) & 1).astype(bool)
        flip = mask(negative)                   # -1 where negative: a sign without a branch
        if packed is not None:
            g = packed[:, 0]
            y = (g ^ flip) - flip
            accept = _fixed_accept(y, packed[:, 1], packed[:, 2], setup, sigma2, rng)
        else:                                   # tails or huge scales: probability <= e**-64
            g = fixed_geometric(setup.plan, bits[:, :width], rng)
            y = (g ^ flip) - flip
            accept = _exceeds_exact_all(y, bits[:, width:], setup.whole_top, sigma2, t, rng)
        accept &= ~(negative & (g == 0))
        kept = y[accept][:need]
        out.append(kept)
        need -= kept.size
    return np.concatenate(out)


def _proposals(setup: _GaussianSetup, m: int, rng: RandomSource
               ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The trials of ``m`` proposals (:func:`fixed_bernoulli`): ``(packed, None)`` with the
    int64 fields (G, floor(E), fractional digits of E) when no tail trial is set and they
    fit, else ``(None, bits)``."""
    bits = fixed_bernoulli(setup.columns, m, rng)
    if setup.weights is None or bits[:, setup.tails].any():
        return None, bits
    return bits.astype(np.int64) @ setup.weights, None


def _fixed_accept(y: np.ndarray, whole: np.ndarray, fraction: np.ndarray,
                  setup: _GaussianSetup, sigma2: Fraction, rng: RandomSource) -> np.ndarray:
    """``E_j > γ(y_j)`` from ``floor(E) < 2**I`` and the first fractional digits of ``E`` (as an
    integer), with an exact fallback when undecided."""
    t = setup.t
    low = whole + fraction * 2.0**-_FIXED_FRACTION_DIGITS     # exact: < 2**7, 40 digits
    gamma_lo, gamma_hi = _gamma_bracket(y, setup.constants)
    accept = low > gamma_hi
    undecided = np.flatnonzero(~accept & (low + 2.0**-_FIXED_FRACTION_DIGITS > gamma_lo))
    for j in undecided:                                       # probability about 2**-40
        accept[j] = _exceeds_exact(Fraction(float(low[j])), Fraction(1, 2**_FIXED_FRACTION_DIGITS),
                                   _gaussian_gamma(int(y[j]), sigma2, t),
                                   _FIXED_FRACTION_DIGITS, rng)
    return accept


def _exceeds_exact_all(y: np.ndarray, e_bits: np.ndarray, whole_top: int, sigma2: Fraction,
                       t: int, rng: RandomSource) -> np.ndarray:
    """The rare rounds with huge proposals or a tail event: every trial in exact arithmetic."""
    weights = 2 ** np.arange(_FIXED_FRACTION_DIGITS, dtype=np.int64)   # digit 40 first
    fraction = e_bits[:, whole_top + 1:].astype(np.int64) @ weights
    accept = np.zeros(len(y), dtype=bool)
    for j, row in enumerate(e_bits):
        whole = int.from_bytes(np.packbits(row[:whole_top], bitorder="little").tobytes(),
                               "little")
        if row[whole_top]:
            step = 2**whole_top                 # floor(E) >= 2**I: memoryless tail
            whole += step
            while bernoulli_exp_unchecked(Fraction(step), rng):
                whole += step
        low = whole + Fraction(int(fraction[j]), 2**_FIXED_FRACTION_DIGITS)
        accept[j] = _exceeds_exact(low, Fraction(1, 2**_FIXED_FRACTION_DIGITS),
                                   _gaussian_gamma(int(y[j]), sigma2, t),
                                   _FIXED_FRACTION_DIGITS, rng)
    return accept


# ------------------------------------------------------------ the acceptance step E > γ

def _gamma_bracket(y: np.ndarray, constants: tuple[float, float]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Float bounds ``lo <= γ <= hi`` for ``γ = (|y| - sigma2/t)**2 / (2 sigma2)``, int64 ``y``,
    from ``constants = (fl(sigma2/t), fl(2 sigma2))`` (:func:`_gamma_constants`).

    Error analysis (IEEE 754, round to nearest, ``u = 2**-53``): ``a = |y|`` converts
    exactly (``< 2**53``); ``c = fl(sigma2/t)`` and ``s = fl(2 sigma2)`` carry relative errors
    ``<= u``. With ``d = a - sigma2/t``, the computed ``fl(fl(fl(a - c)**2) / s)`` equals
    ``(d + e)**2 / (2 sigma2) · (1 + η)`` with ``|e| <= u·sigma2/t`` and ``|η| <= 5.01u``.
    Since ``t > σ``, ``|2de| / (2σ²) <= u·sqrt(2γ)`` and ``e²/(2σ²) <= u²``, so the error is
    below ``8u·(γ̃ + 1)`` for the computed ``γ̃``. The bracket ``γ̃ ± MARGIN·(γ̃ + 1)`` is 64
    times wider than that, which also absorbs the roundings of the bracket itself. Values
    ``|y| >= 2**53`` get ``[0, inf]``, which sends them to the exact rational comparison.
    """
    magnitude = np.abs(y)
    centre, denominator = constants
    d = magnitude.astype(np.float64) - centre
    gamma = d * d / denominator
    margin = MARGIN * (gamma + 1.0)
    lo, hi = np.maximum(gamma - margin, 0.0), gamma + margin
    if magnitude.size and int(magnitude.max()) >= 2**53:
        huge = magnitude >= 2**53
        lo, hi = np.where(huge, 0.0, lo), np.where(huge, np.inf, hi)
    return lo, hi


def _gamma_constants(sigma2: Fraction, t: int) -> tuple[float, float]:
    """``fl(sigma2/t)`` and ``fl(2·sigma2)``, correctly rounded (see :func:`_gamma_bracket`)."""
    return float(sigma2 / t), float(2 * sigma2)


def _exceeds_exact(low: Fraction, width: Fraction, gamma: Fraction, digits: int,
                   rng: RandomSource) -> bool:
    """Continue the digit-wise comparison ``E > gamma`` in exact arithmetic."""
    k = digits
    while True:
        if low > gamma:
            return True
        if low + width <= gamma:
            return False
        k += 1
        width /= 2
        expansion = logistic_expansion(Fraction(1, 2**k))
        if bernoulli_matrix([expansion], 1, rng)[0, 0]:
            low += width


def fixed_result(sampler: Callable[[Fraction, int, RandomSource], np.ndarray],
                  parameter: Fraction, count: int, shape: tuple[int, ...] | None,
                  rng: RandomSource) -> int | np.ndarray:
    """Run a fixed-cost sampler in blocks of ``FIXED_MAX``; one ``int`` if ``shape`` is None."""
    if count == 0:
        values = np.empty(0, dtype=np.int64)
    elif count <= FIXED_MAX:
        values = sampler(parameter, count, rng)
    else:
        values = np.concatenate([sampler(parameter, min(FIXED_MAX, count - start), rng)
                                 for start in range(0, count, FIXED_MAX)])
    if shape is None:
        return int(values[0])
    if values.dtype == np.int64:
        return values.reshape(shape)
    # Python ints stay an object array whatever their size: the dtype follows the sampler's
    # public plan (digits beyond 61) or a tail (probability <= e**-64 a draw), never whether
    # the values drawn fit in int64 (breaker review 23).
    return object_ints([int(v) for v in values], shape)
