"""dpkit beside its peers: speed and random bits, measured in one process run on this machine.

Run ``make bench-peers``: it installs the pinned peers (``requirements.txt`` beside this file)
into ``benchmarks/peers/.venv`` and runs this script with the working tree's ``dpkit`` on the
path. The script prints every table and writes ``benchmarks/results/peers.json`` (date,
machine, versions, tables), which the book's appendix "How fast is exact?" renders.

What is measured (each time is the smallest wall-clock time, ``time.perf_counter``, of
:data:`REPEATS` runs, so that other load on the machine inflates it as little as possible):

* (a) the Laplace and (b) the Gaussian mechanism on a vector of :data:`N` values, dpkit with
  its secure default source against OpenDP's measurement on a vector domain, diffprivlib's
  mechanism (a Python loop, one ``randomise`` call per value: its mechanisms take scalars)
  and NumPy's float sampler (unsafe: floating-point noise, not a secure source);
* (c) discrete Gaussian samplers at σ = 1, 100, 10^4 (samples per second), and the random
  bits each sample reads, against the distribution's entropy (dpkit's vector sampler and its
  fixed-cost sampler for requests of up to 64 values);
* the scalar releases (one value per call), the timing-safe path;
* (d) selection among 10^6 outcomes with utility u(o) = o;
* (e) the analytic Gaussian calibration of σ;
* (f) optimal composition of 10^4 ε-DP mechanisms: time, the ε certified at one δ, and the
  exact δ at each reported ε (300-bit MPFR), which says whether the bound certifies;
* (g) the ceiling: dpkit's secure source (``SecureRandom``, a ChaCha20 keystream keyed from
  the operating system) in requests of 1 MiB (what the vector samplers ask for at a time),
  beside ``os.urandom`` in 4096-byte and 1 MiB blocks (the operating system's generator,
  which the source read directly before it became ChaCha20; ``benchmarks/secure_source.py``
  compares them in more detail), and the share of dpkit's vector time that reading its
  bytes from the secure source accounts for.

The load average of the machine is recorded at the start and at the end of the run.

A peer that is missing or fails is reported as "not measured: <reason>"; the run goes on.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from fractions import Fraction
from importlib import metadata
from pathlib import Path
from typing import Any

import gmpy2
import numpy as np

from dpkit._samplers.base2 import CountingSource
from dpkit._samplers.grid import grid_exponent
from dpkit._samplers.noise import discrete_gaussian
from dpkit.composition import optimal, sequential
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.gaussian import analytic_sigma, gaussian_mechanism, mechanism_parameters
from dpkit.laplace import laplace_mechanism
from dpkit.rng import SecureRandom
from dpkit.timing import unpadded

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "peers.json"
BITS_SCRIPT = ROOT / "benchmarks" / "bits.py"

REPEATS = 5                      # best of this many runs, for every timed call
N = 10**5                        # vector length for (a), (b), (c)
SCALAR_N = 2_000                 # scalar-only samplers (Tumult) are timed on this many calls
EPSILON, DELTA, SENSITIVITY = 1.0, 1e-6, 1.0
SIGMAS = (1, 100, 10**4)         # discrete Gaussian σ for (c)
SELECT_N = 10**5                 # outcomes in (d) (padded: about 1 s per draw, see (d))
CALIBRATIONS = 50                # distinct ε values per timing in (e)
COMPOSE_K, COMPOSE_EPSILON, COMPOSE_DELTA = 10**4, 0.01, 1e-6
URANDOM_BYTES = 64 << 20            # bytes read per throughput timing in (g)
SECURE_BLOCK = 4096                 # the former SecureRandom's refill size (os.urandom)
SOURCE_REQUEST = 1 << 20            # bytes per request of the vector samplers to their source
FIXED_DRAWS = 200                   # fixed-cost draws counted for the bits table
SCALAR_CALLS = 200                  # scalar releases per timing
RATIO = "× dpkit's time (higher = slower)"
PEERS = ("opendp", "dp-accounting", "diffprivlib", "scikit-learn", "tmlt.core", "numpy",
         "scipy", "gmpy2")


# --- measuring --------------------------------------------------------------------------------

class NotMeasured(Exception):
    """A peer could not be measured (not installed, or a call failed)."""


def run_times(fn: Callable[[], object], repeats: int = REPEATS) -> tuple[float, float]:
    """Smallest and median wall-clock time of ``repeats`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return max(min(times), 1e-9), float(np.median(times))


def best_time(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Smallest wall-clock time of ``repeats`` calls of ``fn``, in seconds."""
    return run_times(fn, repeats)[0]


def attempt(name: str, fn: Callable[[], Any], skipped: list[dict]) -> Any:
    """Return ``fn()``; on any failure print and record "not measured: <reason>"."""
    try:
        return fn()
    except Exception as error:  # a peer's failure must not end the run
        reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        print(f"  {name}: not measured: {reason}")
        if os.environ.get("BENCH_PEERS_DEBUG"):
            traceback.print_exc()
        skipped.append({"implementation": name, "reason": reason})
        return None


def counting_numpy_generator() -> tuple[np.random.Generator, list[int]]:
    """A NumPy generator on ``os.urandom`` that counts the 64-bit words it draws.

    Tumult Core's samplers draw from the generator its ``prng()`` returns; substituting this
    one counts every word they take (64 bits each).
    """
    from randomgen.wrapper import UserBitGenerator

    words = [0]

    def next_raw(_: Any) -> int:
        words[0] += 1
        return int.from_bytes(os.urandom(8), "little")

    return np.random.Generator(UserBitGenerator(next_raw, 64)), words


def table(key: str, title: str, columns: list[str], note: str) -> dict:
    return {"id": key, "title": title, "columns": columns, "rows": [], "skipped": [],
            "note": note}


# --- (a), (b): mechanisms on vectors ----------------------------------------------------------

def mechanism_table(kind: str) -> tuple[dict, float]:
    """Laplace or Gaussian mechanism on N values; returns the table and dpkit's time."""
    values = np.full(N, 0.5)
    sigma = analytic_sigma(SENSITIVITY, EPSILON, DELTA)
    scale = SENSITIVITY / EPSILON
    # dpkit's own grid: the Laplace mechanism's from the sensitivity and the length, the
    # Gaussian mechanism's from σ (σ about 2**40 units; the ℓ2 rule of grid_exponent gave
    # 2**-29, coarser, which the runs before this fix reported as dpkit's grid)
    k = (grid_exponent(SENSITIVITY, N) if kind == "laplace" else
         mechanism_parameters(SENSITIVITY, EPSILON, DELTA, N).grid_exponent)
    if kind == "laplace":
        title = f"(a) Laplace mechanism, vector of {N:,}"
        note = (f"One release of a vector of {N:,} values, sensitivity {SENSITIVITY:g}, "
                f"ε = {EPSILON:g} (scale {scale:g})")
        float_noise = "diffprivlib: floating-point noise built from 4 uniform floats"
        opendp_privacy = "OpenDP certifies the same ε (max-divergence)"
    else:
        title = f"(b) Gaussian mechanism, vector of {N:,}"
        note = (f"One release of a vector of {N:,} values, ℓ2 sensitivity {SENSITIVITY:g}, "
                f"ε = {EPSILON:g}, δ = {DELTA:g}, the same σ = {sigma:.4g} (analytic "
                f"calibration) for every library")
        float_noise = "diffprivlib: floating-point noise from normal floats"
        opendp_privacy = ("OpenDP's measurement is given this σ and certifies zCDP "
                          "(ρ = Δ²/(2σ²)), not (ε, δ) directly")
    note += (f". Each library gets the same float64 NumPy array (dpkit's API takes arrays; "
             f"OpenDP copies it into a Rust vector; diffprivlib takes one float per call). "
             f"Granularity: dpkit adds exact discrete noise on the grid 2^{k} ("
             + ("from the sensitivity and the length" if kind == "laplace" else
                "from σ: σ is about 2^40 grid units")
             + f"); OpenDP samples discrete noise on a grid 2^k, "
             f"by default the finest its float type allows, and in the second row at "
             f"k = {k}, dpkit's grid; {opendp_privacy}. {float_noise}, loop of scalar "
             f"calls; NumPy: floating-point noise from PCG64 (not secure, unsafe baseline). "
             f"Time: best and median of {REPEATS} runs, wall clock")
    out = table(kind, title, ["implementation", RATIO, "samples per second",
                              "ms per vector (best)", "ms per vector (median)",
                              "privacy certified"], note)
    out.update(length=N, grid_exponent=k, sigma=sigma if kind == "gaussian" else None,
               scale=scale if kind == "laplace" else None)
    ours = f"ε = {EPSILON:g}" if kind == "laplace" else f"ε = {EPSILON:g}, δ = {DELTA:g}"
    timings: list[tuple[str, tuple[float, float], str]] = []

    if kind == "laplace":
        dpkit_call = lambda: laplace_mechanism(values, SENSITIVITY, EPSILON)  # noqa: E731
    else:
        dpkit_call = lambda: gaussian_mechanism(values, SENSITIVITY, EPSILON, DELTA)  # noqa: E731
    dpkit_times = run_times(dpkit_call)
    timings.append(("dpkit", dpkit_times, ours))

    def opendp_times(granularity: int | None) -> tuple[tuple[float, float], str]:
        import opendp.prelude as dp
        dp.enable_features("contrib")
        # A sized domain: OpenDP needs the length to bound the rounding at a coarse grid.
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=N)
        if kind == "laplace":
            meas = (domain, dp.l1_distance(T=float)) >> dp.m.then_laplace(scale=scale,
                                                                          k=granularity)
        else:
            meas = (domain, dp.l2_distance(T=float)) >> dp.m.then_gaussian(scale=sigma,
                                                                           k=granularity)
        bound = float(meas.map(SENSITIVITY))
        claim = f"ε = {bound:.7g}" if kind == "laplace" else f"ρ = {bound:.4g} (zCDP)"
        return run_times(lambda: meas(values)), claim

    def diffprivlib_times() -> tuple[tuple[float, float], str]:
        from diffprivlib.mechanisms import GaussianAnalytic, Laplace
        if kind == "laplace":
            mech = Laplace(epsilon=EPSILON, delta=0.0, sensitivity=SENSITIVITY)
        else:
            mech = GaussianAnalytic(epsilon=EPSILON, delta=DELTA, sensitivity=SENSITIVITY)
        randomise = mech.randomise
        return run_times(lambda: [randomise(v) for v in values.tolist()]), ours

    generator = np.random.default_rng()
    if kind == "laplace":
        numpy_call = lambda: values + generator.laplace(0.0, scale, N)  # noqa: E731
    else:
        numpy_call = lambda: values + generator.normal(0.0, sigma, N)  # noqa: E731

    peers = [("OpenDP (default k)", lambda: opendp_times(None)),
             (f"OpenDP (k = {k}, dpkit's grid)", lambda: opendp_times(k)),
             ("diffprivlib (loop of scalar calls)", diffprivlib_times),
             ("numpy (unsafe baseline)", lambda: (run_times(numpy_call), "none"))]
    for name, fn in peers:
        result = attempt(name, fn, out["skipped"])
        if result is not None:
            timings.append((name, *result))
    for name, (best, median), claim in timings:
        out["rows"].append([name, best / dpkit_times[0], N / best, 1e3 * best, 1e3 * median,
                            claim])
    return out, dpkit_times[0]


def scalar_table() -> dict:
    """One value per call: the fixed-cost (timing-safe) path, µs per release."""
    out = table("scalar", "Scalar releases (one value per call)",
                ["release", "µs per call (best)", "µs per call (median)"],
                f"dpkit's mechanisms on one float per call, secure source; {SCALAR_CALLS} "
                f"calls per run, best and median of {REPEATS} runs, divided by "
                f"{SCALAR_CALLS}. Requests of up to 64 values use the fixed-cost samplers")
    for name, call in (
            ("Laplace mechanism, one value",
             lambda: laplace_mechanism(0.5, SENSITIVITY, EPSILON)),
            ("Gaussian mechanism, one value",
             lambda: gaussian_mechanism(0.5, SENSITIVITY, EPSILON, DELTA))):
        best, median = run_times(lambda c=call: [c() for _ in range(SCALAR_CALLS)])
        out["rows"].append([name, 1e6 * best / SCALAR_CALLS, 1e6 * median / SCALAR_CALLS])
    return out


# --- (c): discrete Gaussian samplers and their random bits ------------------------------------

def entropy_bits(sigma: float) -> float:
    """Shannon entropy (bits) of the discrete Gaussian ∝ exp(-x²/(2σ²)) on the integers."""
    half = int(40 * sigma) + 40
    x = np.arange(-half, half + 1, dtype=np.float64)
    log_w = -x * x / (2.0 * sigma * sigma)
    log_w -= log_w.max()
    w = np.exp(log_w)
    p = w / w.sum()
    nonzero = p > 0
    return float(-(p[nonzero] * np.log2(p[nonzero])).sum())


def tumult_sampler() -> tuple[Callable[[int], int], Any]:
    from tmlt.core.random import rng as tumult_rng
    from tmlt.core.random.discrete_gaussian import sample_dgauss
    return sample_dgauss, tumult_rng


def sampler_tables() -> tuple[dict, dict]:
    speed = table("discrete_gaussian", "(c) Discrete Gaussian samplers",
                  ["implementation", "σ", RATIO, "samples per second"],
                  f"dpkit (vector of {N:,}: the block-envelope sampler) and OpenDP draw a "
                  f"vector of {N:,} (best of {REPEATS} runs); Tumult Core's sampler takes the "
                  f"variance σ² and returns one sample, so it is timed on a loop of "
                  f"{SCALAR_N:,} calls (best of {REPEATS}), with its default generator")
    bits = table("discrete_gaussian_bits", "(c′) Random bits per discrete Gaussian sample",
                 ["sampler", "σ", "entropy (bits)", "bits per sample", "bits above entropy"],
                 f"dpkit: bytes read from the secure source (× 8), counted by "
                 f"dpkit._samplers.base2.CountingSource: a vector of {N:,} (the "
                 f"block-envelope sampler), and the fixed-cost sampler for requests of up to "
                 f"64 values, {FIXED_DRAWS} requests of one value and {FIXED_DRAWS // 10} of "
                 f"64; Tumult Core: the NumPy generator its prng() returns replaced by one on "
                 f"os.urandom that counts the 64-bit words drawn (× 64), over {SCALAR_N:,} "
                 f"calls; entropy from the exact probabilities")
    try:
        sample_dgauss, tumult_rng = tumult_sampler()
    except Exception as error:
        sample_dgauss = tumult_rng = None
        reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        print(f"  Tumult Core: not measured: {reason}")
        speed["skipped"].append({"implementation": "Tumult Core", "reason": reason})
        bits["skipped"].append({"implementation": "Tumult Core", "reason": reason})

    def counted(sigma2: Fraction, size: int, calls: int) -> float:
        counter = CountingSource(SecureRandom())
        for _ in range(calls):
            discrete_gaussian(sigma2, counter, size=size)
        return counter.count / (size * calls)

    for sigma in SIGMAS:
        sigma2 = Fraction(sigma) ** 2
        dpkit_time = best_time(lambda s=sigma2: discrete_gaussian(s, SecureRandom(), size=N))
        speed["rows"].append(["dpkit", sigma, 1.0, N / dpkit_time])

        def opendp_rate(s: float = sigma) -> float:
            import opendp.prelude as dp
            dp.enable_features("contrib")
            meas = ((dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int))
                    >> dp.m.then_gaussian(scale=float(s)))
            zeros = [0] * N
            return N / best_time(lambda: meas(zeros))

        rate = attempt(f"OpenDP σ={sigma}", opendp_rate, speed["skipped"])
        if rate is not None:
            speed["rows"].append(["OpenDP", sigma, (N / rate) / dpkit_time, rate])

        if sample_dgauss is not None:
            def tumult_rate(s: int = sigma * sigma) -> float:
                return SCALAR_N / best_time(lambda: [sample_dgauss(s) for _ in range(SCALAR_N)])

            rate = attempt(f"Tumult Core σ={sigma}", tumult_rate, speed["skipped"])
            if rate is not None:
                speed["rows"].append(["Tumult Core", sigma, (N / rate) / dpkit_time, rate])

        entropy = entropy_bits(sigma)
        used = [(f"dpkit, vector of {N:,}", counted(sigma2, N, 1)),
                ("dpkit fixed-cost, 1 value", counted(sigma2, 1, FIXED_DRAWS)),
                ("dpkit fixed-cost, 64 values", counted(sigma2, 64, FIXED_DRAWS // 10))]
        if sample_dgauss is not None:
            def count_tumult(s: int = sigma * sigma) -> float:
                saved = tumult_rng._core_privacy_prng
                generator, words = counting_numpy_generator()
                tumult_rng._core_privacy_prng = generator
                try:
                    for _ in range(SCALAR_N):
                        sample_dgauss(s)
                finally:
                    tumult_rng._core_privacy_prng = saved
                return 64 * words[0] / SCALAR_N

            tumult_bits = attempt(f"Tumult Core bits σ={sigma}", count_tumult, bits["skipped"])
            if tumult_bits is not None:
                used.append(("Tumult Core", tumult_bits))
        for name, per_sample in used:
            bits["rows"].append([name, sigma, entropy, per_sample, per_sample - entropy])
    return speed, bits


def dpkit_bits_table() -> dict | None:
    """dpkit's own table of bits per sample against the entropy, from ``benchmarks/bits.py``."""
    if not BITS_SCRIPT.is_file():
        print(f"  dpkit bits table: skipped, {BITS_SCRIPT.relative_to(ROOT)} is missing")
        return None
    spec = importlib.util.spec_from_file_location("dpkit_bench_bits", BITS_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    rows = attempt("dpkit bits table (benchmarks/bits.py)",
                   lambda: (spec.loader.exec_module(module), module.table())[1], [])
    if rows is None:
        return None
    out = table("dpkit_bits", "(c″) dpkit's vector samplers: random bits per sample",
                ["sampler", "scale", "entropy (bits)", "bits per sample", "bits above entropy"],
                "From benchmarks/bits.py: bytes read from the source while sampling vectors "
                "(discrete Laplace and discrete Gaussian), against the exact entropy of each "
                "distribution; scale: the Laplace scale or σ")
    for row in rows:
        entropy, used = float(row["entropy_bits"]), float(row["bits_per_sample"])
        out["rows"].append([str(row["sampler"]), float(row["scale"]), entropy, used,
                            used - entropy])
    return out


# --- (d) selection, (e) calibration, (f) composition ------------------------------------------

def selection_table() -> dict:
    out = table("selection", f"(d) Selection among {SELECT_N:,} outcomes, score u(o) = o",
                ["implementation", RATIO, "ε", "seconds per draw"],
                f"One draw, best of {REPEATS}. dpkit's base-2 exponential mechanism (η from "
                f"ε = {EPSILON:g}, scores u(o) = o in [0, n − 1], lower is likelier) with the "
                f"secure source; OpenDP's report-noisy-max (make_noisy_max, max-divergence, "
                f"scale 2/ε), which picks the largest score, so it gets the scores −o as a "
                f"list. ε: the guarantee each reports for scores of sensitivity 1. dpkit's "
                f"release ends at a deadline that covers its exact fallback, whose precision "
                f"grows with the range of the scores (here n − 1): the 'work alone' row is "
                f"the same draw without that wait (dpkit.timing.unpadded), not a release")
    utilities = np.arange(SELECT_N, dtype=np.float64)
    eta = Eta.from_epsilon(EPSILON)
    ours = best_time(lambda: base2_exponential_mechanism(
        utilities, eta, utility_min=0, utility_max=SELECT_N - 1))
    out["rows"].append(["dpkit base2_exponential_mechanism", 1.0, float(eta.epsilon()), ours])
    with unpadded():
        work = best_time(lambda: base2_exponential_mechanism(
            utilities, eta, utility_min=0, utility_max=SELECT_N - 1))
    out["rows"].append(["dpkit, work alone (no deadline)", work / ours, float(eta.epsilon()),
                        work])

    def opendp_time() -> tuple[float, float]:
        import opendp.prelude as dp
        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
        meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=2.0 / EPSILON)
        scores = [-o for o in range(SELECT_N)]
        return float(meas.map(1)), best_time(lambda: meas(scores))

    result = attempt("OpenDP noisy max", opendp_time, out["skipped"])
    if result is not None:
        epsilon, theirs = result
        out["rows"].append(["OpenDP make_noisy_max", theirs / ours, epsilon, theirs])
    return out


def calibration_table() -> dict:
    epsilons = np.linspace(0.1, 5.0, CALIBRATIONS).tolist()
    out = table("analytic_sigma", "(e) Analytic Gaussian σ (Balle & Wang 2018)",
                ["implementation", RATIO, "ms per call", f"σ at ε = {EPSILON:g}"],
                f"Time: mean over {CALIBRATIONS} distinct ε in [0.1, 5], δ = {DELTA:g}, "
                f"sensitivity 1 (distinct values, so no cache answers); best of {REPEATS}. "
                f"Last column: the σ each returns at ε = {EPSILON:g}, δ = {DELTA:g}")
    ours = best_time(lambda: [analytic_sigma(1.0, e, DELTA) for e in epsilons]) / CALIBRATIONS
    out["rows"].append(["dpkit analytic_sigma", 1.0, 1e3 * ours,
                        analytic_sigma(1.0, EPSILON, DELTA)])

    def theirs() -> tuple[float, float]:
        from dp_accounting import get_sigma_gaussian
        seconds = best_time(lambda: [get_sigma_gaussian(e, DELTA) for e in epsilons])
        return seconds / CALIBRATIONS, get_sigma_gaussian(EPSILON, DELTA)

    result = attempt("dp_accounting get_sigma_gaussian", theirs, out["skipped"])
    if result is not None:
        seconds, sigma = result
        out["rows"].append(["dp_accounting get_sigma_gaussian", seconds / ours, 1e3 * seconds,
                            sigma])
    return out


class ExactProfile:
    """The exact δ(ε') of the k-fold composition of the worst ε0-DP mechanism, 300-bit MPFR.

    δ(ε') = Σ_l C(k, l) (e^{(k−l)ε0} − e^{ε'} e^{l ε0})₊ / (1 + e^{ε0})^k (Kairouz, Oh &
    Viswanath 2015, Theorem 3.3), with ε0 the exact binary value of the float.
    """

    def __init__(self, epsilon: float, k: int) -> None:
        self.precision = 300
        with gmpy2.context(precision=self.precision):
            e0 = gmpy2.mpfr(epsilon)
            log_norm = k * gmpy2.log1p(gmpy2.exp(e0))
            self.losses, self.upper, self.lower = [], [gmpy2.mpfr(0)], [gmpy2.mpfr(0)]
            for ell in range(k + 1):
                loss = (k - 2 * ell) * e0
                if loss <= 0:
                    break
                log_c = gmpy2.log(gmpy2.mpfr(gmpy2.comb(k, ell)))
                self.losses.append(loss)
                self.upper.append(self.upper[-1] + gmpy2.exp(log_c + (k - ell) * e0 - log_norm))
                self.lower.append(self.lower[-1] + gmpy2.exp(log_c + ell * e0 - log_norm))

    def delta(self, epsilon_total: float) -> float:
        with gmpy2.context(precision=self.precision):
            e = gmpy2.mpfr(epsilon_total)
            m = sum(1 for loss in self.losses if loss > e)
            return float(self.upper[m] - gmpy2.exp(e) * self.lower[m])

    def optimum(self, delta: float, low: float, high: float) -> float:
        """The smallest float ε' with δ(ε') ≤ delta, by bisection on floats."""
        while np.nextafter(low, high) < high:
            middle = (low + high) / 2
            if self.delta(middle) <= delta:
                high = middle
            else:
                low = middle
        return high


def composition_table() -> dict:
    k, eps, delta = COMPOSE_K, COMPOSE_EPSILON, COMPOSE_DELTA
    certifies = f"certifies δ = {delta:g}?"
    out = table("composition", f"(f) Composition of k = {k:,} mechanisms, each {eps:g}-DP",
                ["implementation", RATIO, "ms", "ε certified", "ε − ε*", "exact δ at that ε",
                 certifies],
                f"ε of the k-fold composition at δ = {delta:g}, best of {REPEATS}. dpkit: "
                f"optimal composition (Kairouz, Oh & Viswanath 2015), rounded up; "
                f"dp_accounting: the privacy-loss distribution (PLD) of the worst-case "
                f"{eps:g}-DP mechanism self-composed k times, and its PLD accountant for k "
                f"Laplace mechanisms of scale 1/{eps:g} (a bound for Laplace mechanisms only). "
                f"ε*: the exact optimum, and the exact δ at each ε, computed in 300-bit MPFR "
                f"arithmetic from the formula of Kairouz, Oh & Viswanath; the Laplace row is "
                f"not checked against it (it is about a different, smaller profile)")
    profile = ExactProfile(eps, k)
    ours_eps = optimal(eps, 0.0, k, delta)[0]
    star = profile.optimum(delta, 0.0, ours_eps)
    out["exact_optimum"] = star
    out["basic_composition"] = sequential([eps] * k)[0]

    def checked(value: float) -> list:
        exact = profile.delta(value)
        return [value, value - star, exact, "yes" if exact <= delta else "no"]

    ours = best_time(lambda: optimal(eps, 0.0, k, delta))
    out["rows"].append(["dpkit optimal (any ε-DP mechanisms)", 1.0, 1e3 * ours,
                        *checked(ours_eps)])

    def generic() -> tuple[float, float]:
        from dp_accounting.pld import common
        from dp_accounting.pld import privacy_loss_distribution as pld

        def run() -> float:
            params = common.DifferentialPrivacyParameters(eps, 0.0)
            return pld.from_privacy_parameters(params).self_compose(k).get_epsilon_for_delta(
                delta)
        return best_time(run), run()

    def laplace() -> tuple[float, float]:
        import dp_accounting
        from dp_accounting.pld import pld_privacy_accountant

        def run() -> float:
            accountant = pld_privacy_accountant.PLDAccountant()
            accountant.compose(dp_accounting.LaplaceDpEvent(1.0 / eps), k)
            return accountant.get_epsilon(delta)
        return best_time(run), run()

    for name, fn, general in (("dp_accounting PLD (any ε-DP mechanisms)", generic, True),
                              ("dp_accounting PLD accountant (Laplace)", laplace, False)):
        result = attempt(name, fn, out["skipped"])
        if result is not None:
            seconds, value = result
            tail = (checked(value) if general else
                    [value, value - star, None, "Laplace only (not checked)"])
            out["rows"].append([name, seconds / ours, 1e3 * seconds, *tail])
    return out


# --- (g) the ceiling --------------------------------------------------------------------------

def urandom_throughput(block: int) -> float:
    """Bytes per second from ``os.urandom`` in blocks of ``block`` bytes."""
    count = URANDOM_BYTES // block
    seconds = best_time(lambda: [os.urandom(block) for _ in range(count)], repeats=5)
    return count * block / seconds


def source_throughput(request: int) -> float:
    """Bytes per second from dpkit's secure source (``SecureRandom``, ChaCha20) in requests
    of ``request`` bytes."""
    source = SecureRandom()
    count = URANDOM_BYTES // request
    seconds = best_time(lambda: [source.bytes(request) for _ in range(count)], repeats=5)
    return count * request / seconds


def ceiling_table(throughput: float, times: dict[str, float]) -> dict:
    out = table("ceiling", "(g) The ceiling: the secure random source",
                ["dpkit release", "bits per sample read", "ms per vector",
                 "ms reading those bytes", "share of the time"],
                f"dpkit's secure source (SecureRandom: ChaCha20 keyed from the operating "
                f"system) in requests of {SOURCE_REQUEST >> 20} MiB, what the vector samplers "
                f"ask for at a time (best of 5 × {URANDOM_BYTES >> 20} MiB); the bytes a "
                f"vector of {N:,} reads (counted) divided by that throughput, against dpkit's "
                f"time for the vector in (a)/(b)")
    values = np.full(N, 0.5)
    for name, key, call in (
            ("Laplace mechanism", "laplace",
             lambda r: laplace_mechanism(values, SENSITIVITY, EPSILON, rng=r)),
            ("Gaussian mechanism", "gaussian",
             lambda r: gaussian_mechanism(values, SENSITIVITY, EPSILON, DELTA, rng=r))):
        counter = CountingSource(SecureRandom())
        call(counter)
        read = counter.count / 8 / throughput
        out["rows"].append([name, counter.count / N, 1e3 * times[key], 1e3 * read,
                            read / times[key]])
    return out


# --- the run ----------------------------------------------------------------------------------

def machine() -> dict:
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "os": platform.platform(),
            "python": platform.python_version()}


def versions() -> dict:
    out: dict[str, str | None] = {}
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "dpkit"],
                               capture_output=True, text=True, check=True).stdout.strip()
        out["dpkit"] = commit + (" (dpkit/ modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        out["dpkit"] = None
    for name in PEERS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def show(result: dict) -> None:
    print(f"\n{result['title']}\n  {result['note']}")
    widths = [max(len(str(c)), 12) for c in result["columns"]]
    print("  " + "  ".join(f"{c:>{w}}" for c, w in zip(result["columns"], widths, strict=True)))
    for row in result["rows"]:
        cells = []
        for value, width in zip(row, widths, strict=True):
            if value is None:
                text = "–"
            elif isinstance(value, float):
                text = f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
            else:
                text = str(value)
            cells.append(f"{text:>{width}}")
        print("  " + "  ".join(cells))
    for skip in result["skipped"]:
        print(f"  {skip['implementation']}: not measured: {skip['reason']}")


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # progress shows as it is made
    started = time.perf_counter()
    report: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(), "versions": versions(), "repeats": REPEATS,
        "timer": "wall-clock time, time.perf_counter",
    }
    print(f"dpkit beside its peers, {report['date']} on {report['machine']['cpu']} "
          f"({report['machine']['cores']} cores), Python {report['machine']['python']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
    report["load_average"] = {"start": list(os.getloadavg())}
    print(f"load average at start: {report['load_average']['start']}")
    report["os_random_bytes_per_second"] = urandom_throughput(SECURE_BLOCK)
    report["os_random_bytes_per_second_1mib"] = urandom_throughput(1 << 20)
    throughput = source_throughput(SOURCE_REQUEST)
    report["secure_source_bytes_per_second"] = throughput
    print(f"dpkit's secure source (ChaCha20): {throughput / 1e6:.0f} MB/s in "
          f"{SOURCE_REQUEST >> 20} MiB requests; os.urandom: "
          f"{report['os_random_bytes_per_second'] / 1e6:.0f} MB/s in {SECURE_BLOCK}-byte "
          f"blocks, {report['os_random_bytes_per_second_1mib'] / 1e6:.0f} MB/s in 1 MiB blocks")

    tables = []
    laplace, laplace_time = mechanism_table("laplace")
    gaussian, gaussian_time = mechanism_table("gaussian")
    tables += [laplace, gaussian, scalar_table()]
    speed, bits = sampler_tables()
    tables += [speed, bits]
    extra = dpkit_bits_table()
    if extra is not None:
        tables.append(extra)
    tables += [selection_table(), calibration_table(), composition_table(),
               ceiling_table(throughput, {"laplace": laplace_time, "gaussian": gaussian_time})]
    for result in tables:
        show(result)
    report["tables"] = tables
    report["load_average"]["end"] = list(os.getloadavg())
    report["seconds"] = time.perf_counter() - started
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"\nwrote {RESULTS.relative_to(ROOT)} ({report['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
