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
  bits each sample reads, against the distribution's entropy;
* (d) selection among 10^6 outcomes with utility u(o) = o;
* (e) the analytic Gaussian calibration of σ;
* (f) optimal composition of 10^4 ε-DP mechanisms: time and the ε certified at one δ;
* (g) the ceiling: the operating system's random source in large blocks, and the share of
  dpkit's vector time its bytes account for.

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

import numpy as np

from dpkit._sampling import discrete_gaussian
from dpkit.composition import optimal
from dpkit.exponential import Eta, base2_exponential_mechanism
from dpkit.gaussian import analytic_sigma, gaussian_mechanism
from dpkit.laplace import laplace_mechanism
from dpkit.rng import RandomSource, SecureRandom

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "peers.json"
BITS_SCRIPT = ROOT / "benchmarks" / "bits.py"

REPEATS = 5                      # best of this many runs, for every timed call
N = 10**5                        # vector length for (a), (b), (c)
SCALAR_N = 2_000                 # scalar-only samplers (Tumult) are timed on this many calls
EPSILON, DELTA, SENSITIVITY = 1.0, 1e-6, 1.0
SIGMAS = (1, 100, 10**4)         # discrete Gaussian σ for (c)
SELECT_N = 10**6                 # outcomes in (d)
CALIBRATIONS = 50                # distinct ε values per timing in (e)
COMPOSE_K, COMPOSE_EPSILON, COMPOSE_DELTA = 10**4, 0.01, 1e-6
URANDOM_BLOCK, URANDOM_BLOCKS = 1 << 20, 64
PEERS = ("opendp", "dp-accounting", "diffprivlib", "scikit-learn", "tmlt.core", "numpy",
         "scipy", "gmpy2")


# --- measuring --------------------------------------------------------------------------------

class NotMeasured(Exception):
    """A peer could not be measured (not installed, or a call failed)."""


def best_time(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Smallest wall-clock time of ``repeats`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return max(min(times), 1e-9)


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


class CountingSource(RandomSource):
    """The secure source, counting every byte read from it (random bits = 8 × bytes).

    dpkit's samplers read bytes through :meth:`bytes` (small draws go through a buffered bit
    pool that is refilled through it), so the count is what a release takes from the OS.
    """

    def __init__(self) -> None:
        super().__init__()
        self._inner = SecureRandom()
        self.count = 0

    def bytes(self, n: int) -> bytes:
        self.count += 8 * n
        return self._inner.bytes(n)


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
    listed = values.tolist()
    sigma = analytic_sigma(SENSITIVITY, EPSILON, DELTA)
    scale = SENSITIVITY / EPSILON
    if kind == "laplace":
        title = f"(a) Laplace mechanism, vector of {N:,}"
        note = (f"one release of a vector of {N:,} values, sensitivity {SENSITIVITY:g}, "
                f"ε = {EPSILON:g} (scale {scale:g}); best of {REPEATS} runs, wall time")
    else:
        title = f"(b) Gaussian mechanism, vector of {N:,}"
        note = (f"one release of a vector of {N:,} values, ℓ2 sensitivity {SENSITIVITY:g}, "
                f"ε = {EPSILON:g}, δ = {DELTA:g} (analytic σ = {sigma:.4g}); best of "
                f"{REPEATS} runs, wall time")
    out = table(kind, title, ["implementation", "noise", "samples per second", "ms per vector",
                              "time / dpkit's"], note)
    timings: list[tuple[str, str, float]] = []

    if kind == "laplace":
        dpkit_call = lambda: laplace_mechanism(values, SENSITIVITY, EPSILON)  # noqa: E731
    else:
        dpkit_call = lambda: gaussian_mechanism(values, SENSITIVITY, EPSILON, DELTA)  # noqa: E731
    dpkit_time = best_time(dpkit_call)
    timings.append(("dpkit", "exact discrete on a 2^k grid, secure source", dpkit_time))

    def opendp_time() -> float:
        import opendp.prelude as dp
        dp.enable_features("contrib")
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        if kind == "laplace":
            meas = (domain, dp.l1_distance(T=float)) >> dp.m.then_laplace(scale=scale)
        else:
            meas = (domain, dp.l2_distance(T=float)) >> dp.m.then_gaussian(scale=sigma)
        return best_time(lambda: meas(listed))

    def diffprivlib_time() -> float:
        from diffprivlib.mechanisms import GaussianAnalytic, Laplace
        if kind == "laplace":
            mech = Laplace(epsilon=EPSILON, delta=0.0, sensitivity=SENSITIVITY)
        else:
            mech = GaussianAnalytic(epsilon=EPSILON, delta=DELTA, sensitivity=SENSITIVITY)
        randomise = mech.randomise
        return best_time(lambda: [randomise(v) for v in listed])

    generator = np.random.default_rng()
    if kind == "laplace":
        numpy_call = lambda: values + generator.laplace(0.0, scale, N)  # noqa: E731
    else:
        numpy_call = lambda: values + generator.normal(0.0, sigma, N)  # noqa: E731

    float_noise = ("floating point, from 4 uniform floats" if kind == "laplace"
                   else "floating point, from 2 normal floats")
    peers = [("OpenDP", "discrete noise internally (its docs)", opendp_time),
             ("diffprivlib (loop of scalar calls)", float_noise, diffprivlib_time),
             ("numpy (unsafe baseline)", "floating point, PCG64 (not secure)",
              lambda: best_time(numpy_call))]
    for name, noise, fn in peers:
        seconds = attempt(name, fn, out["skipped"])
        if seconds is not None:
            timings.append((name, noise, seconds))
    for name, noise, seconds in timings:
        out["rows"].append([name, noise, N / seconds, 1e3 * seconds, seconds / dpkit_time])
    return out, dpkit_time


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
    speed = table("discrete_gaussian", "(c) discrete Gaussian samplers",
                  ["implementation", "σ", "samples per second", "time / dpkit's"],
                  f"dpkit and OpenDP draw a vector of {N:,} (best of {REPEATS} runs); Tumult "
                  f"Core's sampler takes one σ² per call and is timed on a loop of "
                  f"{SCALAR_N:,} calls (best of {REPEATS}), with its default generator")
    bits = table("discrete_gaussian_bits", "(c) random bits per discrete Gaussian sample",
                 ["σ", "entropy (bits)", "dpkit bits per sample", "Tumult Core bits per sample",
                  "dpkit / entropy", "Tumult / entropy"],
                 f"dpkit: bytes read from the secure source while drawing a vector of {N:,}, "
                 f"× 8 / {N:,}; Tumult Core: its module-level generator (prng()) replaced by a "
                 f"NumPy generator on os.urandom that counts the 64-bit words drawn, × 64, "
                 f"over {SCALAR_N:,} calls; entropy computed from the exact probabilities")
    try:
        sample_dgauss, tumult_rng = tumult_sampler()
    except Exception as error:
        sample_dgauss = tumult_rng = None
        reason = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        print(f"  Tumult Core: not measured: {reason}")
        speed["skipped"].append({"implementation": "Tumult Core", "reason": reason})
        bits["skipped"].append({"implementation": "Tumult Core", "reason": reason})

    for sigma in SIGMAS:
        sigma2 = Fraction(sigma) ** 2
        dpkit_time = best_time(lambda s=sigma2: discrete_gaussian(s, SecureRandom(), size=N))
        speed["rows"].append(["dpkit", sigma, N / dpkit_time, 1.0])

        def opendp_rate(s: float = sigma) -> float:
            import opendp.prelude as dp
            dp.enable_features("contrib")
            meas = ((dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int))
                    >> dp.m.then_gaussian(scale=float(s)))
            zeros = [0] * N
            return N / best_time(lambda: meas(zeros))

        rate = attempt(f"OpenDP σ={sigma}", opendp_rate, speed["skipped"])
        if rate is not None:
            speed["rows"].append(["OpenDP", sigma, rate, (N / rate) / dpkit_time])

        if sample_dgauss is not None:
            def tumult_rate(s: int = sigma * sigma) -> float:
                return SCALAR_N / best_time(lambda: [sample_dgauss(s) for _ in range(SCALAR_N)])

            rate = attempt(f"Tumult Core σ={sigma}", tumult_rate, speed["skipped"])
            if rate is not None:
                speed["rows"].append(["Tumult Core", sigma, rate, (N / rate) / dpkit_time])

        counter = CountingSource()
        discrete_gaussian(sigma2, counter, size=N)
        dpkit_bits = counter.count / N
        tumult_bits = None
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
        entropy = entropy_bits(sigma)
        bits["rows"].append([sigma, entropy, dpkit_bits, tumult_bits, dpkit_bits / entropy,
                             None if tumult_bits is None else tumult_bits / entropy])
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
    out = table("dpkit_bits", "dpkit: random bits per sample against the entropy",
                ["sampler", "scale", "entropy (bits)", "bits per sample", "bits above entropy"],
                "from benchmarks/bits.py: bytes read from the source while sampling vectors, "
                "against the exact entropy of each distribution")
    for row in rows:
        entropy, used = float(row["entropy_bits"]), float(row["bits_per_sample"])
        out["rows"].append([str(row["sampler"]), float(row["scale"]), entropy, used,
                            used - entropy])
    return out


# --- (d) selection, (e) calibration, (f) composition ------------------------------------------

def selection_table() -> dict:
    out = table("selection", f"(d) selection among {SELECT_N:,} outcomes, u(o) = o",
                ["implementation", "ε", "seconds per draw", "time / dpkit's"],
                f"one draw, best of {REPEATS}; dpkit's base-2 exponential mechanism (η from "
                f"ε = {EPSILON:g}, losses u(o) = o in [0, n − 1]) with the secure source; "
                f"OpenDP's report-noisy-max (make_noisy_max, max-divergence, scores −o passed "
                f"as a list, scale 2/ε); ε column: the guarantee each reports for "
                f"utilities of sensitivity 1")
    utilities = np.arange(SELECT_N, dtype=np.float64)
    eta = Eta.from_epsilon(EPSILON)
    ours = best_time(lambda: base2_exponential_mechanism(
        utilities, eta, utility_min=0, utility_max=SELECT_N - 1))
    out["rows"].append(["dpkit base2_exponential_mechanism", float(eta.epsilon()), ours, 1.0])

    def opendp_time() -> float:
        import opendp.prelude as dp
        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
        meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=2.0 / EPSILON)
        scores = [-o for o in range(SELECT_N)]
        return float(meas.map(1)), best_time(lambda: meas(scores))

    result = attempt("OpenDP noisy max", opendp_time, out["skipped"])
    if result is not None:
        epsilon, theirs = result
        out["rows"].append(["OpenDP make_noisy_max", epsilon, theirs, theirs / ours])
    return out


def calibration_table() -> dict:
    epsilons = np.linspace(0.1, 5.0, CALIBRATIONS).tolist()
    out = table("analytic_sigma", "(e) analytic Gaussian σ (Balle & Wang 2018)",
                ["implementation", "ms per call", "time / dpkit's"],
                f"mean over {CALIBRATIONS} distinct ε in [0.1, 5], δ = {DELTA:g}, "
                f"sensitivity 1 (distinct values, so no cache answers); best of {REPEATS}")
    ours = best_time(lambda: [analytic_sigma(1.0, e, DELTA) for e in epsilons]) / CALIBRATIONS
    out["rows"].append(["dpkit analytic_sigma", 1e3 * ours, 1.0])

    def theirs() -> float:
        from dp_accounting import get_sigma_gaussian
        return best_time(lambda: [get_sigma_gaussian(e, DELTA) for e in epsilons]) / CALIBRATIONS

    seconds = attempt("dp_accounting get_sigma_gaussian", theirs, out["skipped"])
    if seconds is not None:
        out["rows"].append(["dp_accounting get_sigma_gaussian", 1e3 * seconds, seconds / ours])
    return out


def composition_table() -> dict:
    k, eps, delta = COMPOSE_K, COMPOSE_EPSILON, COMPOSE_DELTA
    out = table("composition", f"(f) composition of k = {k:,} mechanisms, each {eps:g}-DP",
                ["implementation", "ms", "ε certified", "ε / dpkit's − 1", "time / dpkit's"],
                f"ε of the k-fold composition at δ = {delta:g}, best of {REPEATS}; dpkit: "
                f"optimal composition (Kairouz, Oh & Viswanath 2015), rounded up; "
                f"dp_accounting: privacy-loss distribution (PLD) of the worst-case "
                f"{eps:g}-DP mechanism self-composed k times (the same quantity, discretised "
                f"pessimistically), and its PLD accountant for k Laplace mechanisms of scale "
                f"1/{eps:g} (a mechanism-specific bound, smaller by design)")
    ours = best_time(lambda: optimal(eps, 0.0, k, delta))
    ours_eps = optimal(eps, 0.0, k, delta)[0]
    out["rows"].append(["dpkit optimal (any ε-DP mechanisms)", 1e3 * ours, ours_eps, 0.0, 1.0])

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

    for name, fn in (("dp_accounting PLD (any ε-DP mechanisms)", generic),
                     ("dp_accounting PLD accountant (Laplace)", laplace)):
        result = attempt(name, fn, out["skipped"])
        if result is not None:
            seconds, value = result
            out["rows"].append([name, 1e3 * seconds, value, value / ours_eps - 1,
                                seconds / ours])
    return out


# --- (g) the ceiling --------------------------------------------------------------------------

def urandom_throughput() -> float:
    """Bytes per second from ``os.urandom`` in blocks of 1 MiB."""
    seconds = best_time(lambda: [os.urandom(URANDOM_BLOCK) for _ in range(URANDOM_BLOCKS)],
                        repeats=5)
    return URANDOM_BLOCK * URANDOM_BLOCKS / seconds


def ceiling_table(throughput: float, times: dict[str, float]) -> dict:
    out = table("ceiling", "(g) the ceiling: the OS random source",
                ["dpkit release", "bits per sample from the OS", "ms per vector",
                 "ms reading those bytes", "share of the time"],
                f"os.urandom in blocks of 1 MiB (best of 5 × {URANDOM_BLOCKS} MiB); the bytes "
                f"a vector of {N:,} reads (counted) divided by that throughput, against "
                f"dpkit's time for the vector in (a)/(b)")
    values = np.full(N, 0.5)
    for name, key, call in (
            ("Laplace mechanism", "laplace",
             lambda r: laplace_mechanism(values, SENSITIVITY, EPSILON, rng=r)),
            ("Gaussian mechanism", "gaussian",
             lambda r: gaussian_mechanism(values, SENSITIVITY, EPSILON, DELTA, rng=r))):
        counter = CountingSource()
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
    throughput = urandom_throughput()
    report["os_random_bytes_per_second"] = throughput
    print(f"os.urandom: {throughput / 1e6:.0f} MB/s")

    tables = []
    laplace, laplace_time = mechanism_table("laplace")
    gaussian, gaussian_time = mechanism_table("gaussian")
    tables += [laplace, gaussian]
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
    report["seconds"] = time.perf_counter() - started
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"\nwrote {RESULTS.relative_to(ROOT)} ({report['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
