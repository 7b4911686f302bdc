"""Random bits per sample of dpkit's vectorised exact samplers, against the entropy.

An exact sampler must read at least the entropy ``H`` of its output on average, and Knuth &
Yao (1976) show ``H + 2`` bits suffice; issue 13 asks for at most ``H + 16`` on average
(a single call of a few values can read more). For the
discrete Laplace (scale ``s``) and the discrete Gaussian (``σ``) at scales 1 to ``10**6`` and
at a mechanism-size scale, this counts the bytes drawn from the secure default source
(through :class:`dpkit._samplers.base2.CountingSource`) for vectors of ``10**5``
values and prints bits per sample, ``H`` (computed from the pmf) and their difference.

``table()`` returns the rows (keys ``sampler``, ``scale``, ``entropy_bits``,
``bits_per_sample``), for other benchmarks to import by path. ``scalar_table()`` counts
the bits of *scalar* draws (one value per call, the fixed-cost sampler) at the scales a
scalar release uses (2**21 + 2 grid units for ``laplace_mechanism(x, 1, 0.5)``, up to
``2**53/750`` on the Laplace mechanism's float path, σ ≈ 2**40 for
``gaussian_mechanism(x, 1, 0.5, 1e-6)``) and at small ones: a Laplace draw reads the same
number of bits every time (the interval walk's ``B``); a Gaussian draw a multiple of its
round's.

Run: ``.venv/bin/python benchmarks/bits.py``
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpkit._samplers.base2 import CountingSource
from dpkit._samplers.noise import discrete_gaussian, discrete_laplace
from dpkit.rng import RandomSource, default

SCALES = (1, 10, 100, 10**3, 10**4, 10**5, 10**6)
MECHANISM_SCALE = 2**40        # the order of the grid-unit scales (and σ) the mechanisms
                               # use on vectors of 10**5 values and more
VECTOR = 100_000


def laplace_entropy(scale: float) -> float:
    """Entropy in bits of ``P[x] ∝ exp(-|x|/scale)``, in closed form.

    ``P[0] = (1 - p)/(1 + p)`` with ``p = e**(-1/scale)`` and ``E|X| = 2p/((1 - p)(1 + p))``,
    so ``H = -log2 P[0] + E|X|/(scale·ln 2)``.
    """
    one_minus_p = -math.expm1(-1 / scale)
    p = 1 - one_minus_p
    p0 = one_minus_p / (1 + p)
    mean_abs = 2 * p / (one_minus_p * (1 + p))
    return -math.log2(p0) + mean_abs / (scale * math.log(2))


def gaussian_entropy(sigma: float) -> float:
    """Entropy in bits of ``P[x] ∝ exp(-x²/(2σ²))``: a sum over ``|x| <= 40σ`` for
    ``σ <= 10**4``, else ``log2(σ·sqrt(2πe))`` (the difference is below ``e**(-2π²σ²)``
    relative, Poisson summation)."""
    if sigma > 1e4:
        return math.log2(sigma * math.sqrt(2 * math.pi * math.e))
    x = np.arange(-math.ceil(40 * sigma), math.ceil(40 * sigma) + 1, dtype=np.float64)
    log_w = -x * x / (2 * sigma * sigma)
    w = np.exp(log_w)
    z = w.sum()
    return float(math.log2(z) - np.sum(w * log_w) / z / math.log(2))


def bits_per_sample(sampler: str, scale: int, source: RandomSource | None = None,
                    n: int = VECTOR) -> float:
    """Random bits read per value for one vector of ``n`` values at this scale (or σ)."""
    counter = CountingSource(default() if source is None else source)
    if sampler == "discrete_laplace":
        discrete_laplace(Fraction(scale), counter, size=n)
    else:
        discrete_gaussian(Fraction(scale) ** 2, counter, size=n)
    return counter.count / n


def table(source: RandomSource | None = None, n: int = VECTOR) -> list[dict]:
    """Rows ``{sampler, scale, entropy_bits, bits_per_sample}`` for both samplers."""
    rows = []
    for sampler, entropy in (("discrete_laplace", laplace_entropy),
                             ("discrete_gaussian", gaussian_entropy)):
        for scale in (*SCALES, MECHANISM_SCALE):
            bits_per_sample(sampler, scale, source, n=1000)      # build the tables first
            rows.append({"sampler": sampler, "scale": scale,
                         "entropy_bits": entropy(float(scale)),
                         "bits_per_sample": bits_per_sample(sampler, scale, source, n)})
    return rows


SCALAR_CASES = (("discrete_laplace", Fraction(2**21 + 2)), ("discrete_laplace", Fraction(5, 2)),
                ("discrete_laplace", Fraction(1)), ("discrete_laplace", Fraction(2**53, 750)),
                ("discrete_gaussian", Fraction(1107430651552)),
                ("discrete_gaussian", Fraction(3)))
SCALAR_CALLS = 2000


def scalar_table(source: RandomSource | None = None, calls: int = SCALAR_CALLS) -> list[dict]:
    """Rows ``{sampler, scale, entropy_bits, bits_per_sample}`` for scalar draws."""
    rows = []
    for sampler, scale in SCALAR_CASES:
        counter = CountingSource(default() if source is None else source)
        for _ in range(calls):
            if sampler == "discrete_laplace":
                discrete_laplace(scale, counter)
            else:
                discrete_gaussian(scale**2, counter)
        entropy = laplace_entropy if sampler == "discrete_laplace" else gaussian_entropy
        rows.append({"sampler": sampler, "scale": float(scale),
                     "entropy_bits": entropy(float(scale)),
                     "bits_per_sample": counter.count / calls})
    return rows


def main() -> None:
    print(f"{'sampler':<18} {'scale or σ':>18} {'H (bits)':>9} {'bits/sample':>12} "
          f"{'bits − H':>9}")
    for r in table():
        print(f"{r['sampler']:<18} {r['scale']:>18,} {r['entropy_bits']:>9.2f} "
              f"{r['bits_per_sample']:>12.2f} {r['bits_per_sample'] - r['entropy_bits']:>9.2f}")
    print(f"\nscalar draws ({SCALAR_CALLS} calls of one value)")
    for r in scalar_table():
        print(f"{r['sampler']:<18} {r['scale']:>18,.1f} {r['entropy_bits']:>9.2f} "
              f"{r['bits_per_sample']:>12.2f} {r['bits_per_sample'] - r['entropy_bits']:>9.2f}")


if __name__ == "__main__":
    main()
