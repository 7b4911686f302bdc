"""``benchmarks/breakdown.py`` accounts for the whole release: no stage dropped, none counted twice.

The script is imported by path (``benchmarks/`` is not a package) and its table function
run on one small vector per mechanism. No time is asserted (timings belong in the
benchmarks); what is checked is bookkeeping that holds on any machine under any load:

* the tracer's stages add up exactly (in integer nanoseconds) to the traced work's time,
  measured separately from the stages, so a stage whose time is not charged or not
  listed in ``STAGES`` makes the sum fall short;
* the printed rows (padding included) add up to the release within their rounding, and
  their shares to 100%;
* the counts are those of the request: every value was proposed at least once, bits were
  read, and every value was proposed in a first pass.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from dpkit.laplace import laplace_mechanism

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "breakdown.py"
N = 3000          # more than the fixed-cost samplers' 64 values: the envelope sampler runs


def _load():
    spec = importlib.util.spec_from_file_location("dpkit_bench_breakdown", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load()


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_rows_add_up_to_the_release(bench, mechanism: str) -> None:
    """Every stage's µs, padding included, sums to the release; the shares to 100%."""
    (result,) = bench.table((N,), repeats=2, mechanisms=(mechanism,))
    assert list(result.stages) == list(bench.STAGES)
    total = sum(result.stages.values())
    assert total == pytest.approx(result.release_us, rel=1e-9)
    printed = bench.report(result)
    rows = [line for line in printed.splitlines()
            if line[:32].strip() in bench.STAGES]
    assert len(rows) == len(bench.STAGES)
    micros = [float(row[32:].split()[0].replace(",", "")) for row in rows]
    assert abs(sum(micros) - result.release_us) <= 0.5 * len(rows) + 0.5
    shares = [float(row[32:].split()[1].rstrip("%")) for row in rows]
    assert abs(sum(shares) - 100.0) <= 0.05 * len(rows)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_tracer_charges_every_nanosecond(bench, mechanism: str) -> None:
    """The traced stages sum exactly to the work's time from its call to its return, and
    the counts match the request (one traced release of ``N`` values)."""
    value = np.linspace(0.0, 1000.0, N)
    release, _, work, _ = bench._release(mechanism, value)
    release()
    tracer = bench.StageTracer(work, value)
    tracer.run(release)
    assert set(tracer.times) == set(bench.STAGES) - {bench.PADDING}
    assert sum(tracer.times.values()) == tracer.whole > 0
    counts = tracer.counts
    assert counts["values"] == N                  # one request of N values, traced once
    assert counts["proposals"] >= N and counts["fills"] >= 1
    assert 8 * counts["bytes"] >= 40 * N          # at least the entropy (about 43 bits)
    assert tracer.times[bench.BYTES] > 0 and tracer.times[bench.ADD] > 0


def test_other_releases_are_not_traced(bench) -> None:
    """Only the release of the traced vector is charged: a release of another vector made
    inside the traced call (as a re-warm would) adds nothing."""
    value = np.linspace(0.0, 1000.0, N)
    other = np.zeros(N)
    tracer = bench.StageTracer(bench._release("laplace", value)[2], value)
    tracer.run(lambda: laplace_mechanism(other, 1.0, 0.5))
    assert tracer.whole == 0 and sum(tracer.counts.values()) == 0


def test_report_names_the_load_free_quantities(bench) -> None:
    """The report prints the ratios to NumPy and the counts the analysis uses."""
    (result,) = bench.table((N,), repeats=1, mechanisms=("laplace",))
    text = bench.report(result)
    for pattern in (r"speed against it: padded \d+\.\d\d×, work alone \d+\.\d\d×",
                    r"bits read per value \d+\.\d", r"rejection rate \d+\.\d\d%",
                    r"sampler passes \(Envelope._fill calls\) per release: \d+ over"):
        assert re.search(pattern, text), pattern
