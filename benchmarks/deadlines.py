"""Do the release deadlines cover the work? Each function's unpadded cost against its Cost.

Every public release function ends at a deadline ``margin · cost(n)`` (:mod:`dpkit.timing`).
Its :class:`~dpkit.timing.Cost` constants must cover the *worst* work over the inputs an
adversary may choose. This script runs each function with padding switched off on
adversarial inputs (long and short binary expansions, large magnitudes, both sides of
internal switches, Python objects) at several sizes, and prints the median, 99th and 99.9th
percentiles of the unpadded time as a fraction of the deadline at margin 1: a fraction
above 1 at the median means the constants are too small (the release would overrun its
deadline even on a quiet machine); the margin (default 2) absorbs the rest.

Run: ``python benchmarks/deadlines.py [--calls N] [--level-1] [name-filter ...]``
(``--level-1``: the fast exponential sampler's level 0 decides nothing, so every draw
runs its level 1, the slowest path the ``"fast"`` deadline covers).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
from collections.abc import Callable
from decimal import ROUND_DOWN, Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np

import dpkit.timing as timing
from dpkit._exact import MAX_DECIMAL_DIGITS, MAX_EXACT_BITS, MAX_ROW_DECIMAL_DIGITS
from dpkit._samplers import base2
from dpkit.exponential import DEFAULT_MAX_PRECISION, Eta, base2_exponential_mechanism
from dpkit.gaussian import gaussian_mechanism
from dpkit.laplace import laplace_mechanism, sample_releases
from dpkit.randomized_response import randomized_response
from dpkit.rng import seeded
from dpkit.snapping import snapping_mechanism
from dpkit.svt import above_threshold, above_threshold_runs, range_queries, sparse
from dpkit.svt.clipping import (
    DEFAULT_CLIP_BOUNDS,
    auto_avg,
    auto_avg_runs,
    choose_clip_bound,
    clip_bound_runs,
)

SOURCE = seeded(2026)


def _values(kind: str, n: int) -> Any:
    """Adversarial query values of one kind, ``n`` of them."""
    if kind == "short":
        return np.full(n, 0.5)
    if kind == "long":
        return np.full(n, 0.1) + np.arange(n) * 2.0**-40
    if kind == "huge":
        return np.full(n, 1e300)
    if kind == "subnormal":
        return np.full(n, 5e-324)
    if kind == "list of floats":
        return [0.1] * n
    if kind == "list of big ints":
        return [2**60 + 1] * n
    if kind == "list of Decimals":
        return [Decimal("0.1")] * n
    if kind == "list of Fractions":
        return [Fraction(1, 3)] * n
    if kind == "list of longest Decimals":
        return [LONGEST_DECIMAL] * n
    if kind == "list of longest Fractions":
        return [LONGEST_FRACTION] * n
    if kind == "list of longest ints":
        return [LONGEST_INT] * n
    raise ValueError(kind)


#: The largest exact values accepted (:data:`dpkit._exact.MAX_DECIMAL_DIGITS` digits, the
#: last at the smallest exponent accepted; numerator and denominator of ``MAX_EXACT_BITS`` bits; an
#: int of 1,021 bits, not a float): the deadlines must cover them too.
LONGEST_DECIMAL = Decimal("0." + "7" * MAX_DECIMAL_DIGITS)  # last digit 1e-360
LONGEST_FRACTION = Fraction(2**MAX_EXACT_BITS - 1, 2**MAX_EXACT_BITS - 3)
LONGEST_INT = 2**1020 + 1   # inexact, and far enough from the float range to be released


def _hardest_row_decimal() -> Decimal:
    """A row of :data:`~dpkit._exact.MAX_ROW_DECIMAL_DIGITS` digits just below the halfway
    point between the smallest normal float and the next: ``float()`` rounds it correctly
    only by comparing it with that point in big-int arithmetic, about 27 µs (1 U), the
    slowest row the clipping functions accept (breaker review 33, F1)."""
    low = sys.float_info.min
    halfway = Fraction(low) + Fraction(math.ulp(low)) / 2
    with localcontext() as context:
        context.prec = MAX_ROW_DECIMAL_DIGITS
        context.rounding = ROUND_DOWN
        return Decimal(halfway.numerator) / Decimal(halfway.denominator)


HARDEST_ROW_DECIMAL = _hardest_row_decimal()
#: The largest int an SVT accepts as an answer or threshold (any magnitude up to the limit).
LONGEST_SVT_INT = 2**MAX_EXACT_BITS - 1

KINDS = ("short", "long", "huge", "subnormal", "list of floats", "list of big ints",
         "list of Decimals", "list of Fractions", "list of longest Decimals",
         "list of longest Fractions", "list of longest ints")
#: The snapping mechanism refuses a value inside (-B, B) that float64 cannot hold, so its
#: Decimals and Fractions lie beyond B = 1000 (clamped exactly); its other kinds as above.
SNAPPING_OBJECTS = {"list of Decimals": Decimal("12345.6"),
                    "list of Fractions": Fraction(10**6, 3),
                    "list of longest Decimals": Decimal("1." + "7" * (MAX_DECIMAL_DIGITS - 1)
                                                        + "e308"),
                    "list of longest Fractions": Fraction(2**MAX_EXACT_BITS - 1,
                                                          2**(MAX_EXACT_BITS - 20) + 1)}
SIZES = (1, 64, 65, 1000, 100_000)
#: Small sizes at which the fixed-cost discrete Gaussian often takes a second round, at the
#: mechanism's σ (4.5% of requests of 2 values, 6.6% of 10; the most is 10.0%, at 5) and, at
#: 2, a third (0.029%; 0.031% at 3): ``fixed_discrete_gaussian``'s Notes.
ROUND_SIZES = (2, 3, 5, 10)


def _cases() -> list[tuple[str, int, Callable[[], Any]]]:
    """(function and input, size, call) for every function, size and input kind."""
    cases: list[tuple[str, int, Callable[[], Any]]] = []
    eta = Eta.from_epsilon(1.0, 1.0)
    bounds = tuple(range(1, 101))
    for n in ROUND_SIZES:
        for kind in ("short", "list of longest Decimals"):
            value = _values(kind, n)
            cases.append((f"gaussian {kind}", n,
                          lambda v=value: gaussian_mechanism(v, 1.0, 1.0, 1e-6, rng=SOURCE)))
    for n in SIZES:
        for kind in KINDS:
            if kind.startswith("list") and n > 1000:
                continue
            value = _values(kind, n)
            cases.append((f"laplace {kind}", n,
                          lambda v=value: laplace_mechanism(v, 1.0, 1.0, rng=SOURCE)))
            snap_value = [SNAPPING_OBJECTS[kind]] * n if kind in SNAPPING_OBJECTS else value
            cases.append((f"snapping {kind}", n,
                          lambda v=snap_value: snapping_mechanism(v, 1.0, 1.0, 1000.0,
                                                                  rng=SOURCE)))
            if kind != "huge":
                cases.append((f"gaussian {kind}", n,
                              lambda v=value: gaussian_mechanism(v, 1.0, 1.0, 1e-6,
                                                                 rng=SOURCE)))
        answers = np.arange(n) % 2 == 0
        cases.append(("randomized_response", n,
                      lambda a=answers: randomized_response(a, 1.0, rng=SOURCE)))
        if n <= 1000:
            for kind, utilities in (("integers", np.arange(n) % 7 * 1.0),
                                    ("halves", np.arange(n) % 7 + 0.5)):
                cases.append((f"base2 fast {kind}", n,
                              lambda u=utilities: base2_exponential_mechanism(
                                  u, eta, utility_min=0, utility_max=8, rng=SOURCE)))
            # Bounds [0, n]: the deadline covers the common path only (issue 18), not the
            # exact fallback's precision, which grows with the span.
            cases.append(("base2 fast spread bounds [0, n]", n,
                          lambda n=n: base2_exponential_mechanism(
                              np.arange(n, dtype=float), eta, utility_min=0, utility_max=n,
                              rng=SOURCE)))
            queries = [lambda d, i=i: d[i % len(d)] for i in range(n)]
            for kind, data in (("floats", [0.5] * 8), ("long floats", [0.1 + 2.0**-40] * 8),
                               ("ints", [10**6] * 8), ("Fractions", [Fraction(1, 3)] * 8),
                               ("longest Decimals", [LONGEST_DECIMAL] * 8),
                               ("longest Fractions", [LONGEST_FRACTION] * 8),
                               ("longest ints", [-LONGEST_SVT_INT] * 8)):
                cases.append((f"above_threshold {kind}", n,
                              lambda q=queries, d=data: above_threshold(q, d, 1e9, 1.0,
                                                                        rng=SOURCE)))
                cases.append((f"sparse c=3 {kind}", n,
                              lambda q=queries, d=data: sparse(q, d, 1e9, 1.0, 3,
                                                               rng=SOURCE)))
                if kind == "longest ints":  # beyond 2**1000: refused by range_queries
                    continue
                cases.append((f"range_queries c=3 {kind}", n,
                              lambda q=queries, d=data: range_queries(q, d, 3, 1e9, 1.0,
                                                                      rng=SOURCE)))
                if kind in ("floats", "longest Decimals"):
                    # the last query positive: the last step releases 1 of c = 3 answers,
                    # and is charged for 1 (breaker review 42: untimed until then)
                    last = [*queries[:-1], lambda d: 1e12]
                    cases.append((f"range_queries c=3 one positive {kind}", n,
                                  lambda q=last, d=data: range_queries(q, d, 3, 1e9, 1.0,
                                                                       rng=SOURCE)))
        if n >= 64:
            # max_rows = n, the tightest deadline for n rows (the work grows with the rows).
            row_kinds = [("integers", np.arange(n) % 90 * 1.0),
                         ("inside", np.arange(n) % 90 + 0.37)]
            if n <= 1000:
                row_kinds += [(kind, list(_values(kind, n))) for kind in KINDS
                               if kind.startswith("list")]
                row_kinds.append(("list of hardest row Decimals", [HARDEST_ROW_DECIMAL] * n))
            for kind, rows in row_kinds:
                cases.append((f"choose_clip_bound {kind}", n,
                              lambda r=rows, n=n: choose_clip_bound(r, 1.0, bounds=bounds,
                                                                    rng=SOURCE, max_rows=n)))
                cases.append((f"auto_avg {kind}", n,
                              lambda r=rows, n=n: auto_avg(r, 1.0, bounds=bounds, rng=SOURCE,
                                                           max_rows=n)))
    cases.extend(_runs_cases(bounds))
    cases.extend(_rounding_cases(eta))
    cases.extend(_precision_cases(eta))
    cases.extend(_clipping_cases())
    return cases


#: Fine candidate bounds (finding F2): 4,096 on the grid 2**-12 between 36 and 37, and 100
#: off every power-of-two grid (tenths), which take the (row, candidate) pairs path.
FINE_BOUNDS = tuple(36 + i / 4096 for i in range(4096))
TENTHS_BOUNDS = tuple(36 + i / 10 for i in range(100))


def _clipping_cases() -> list[tuple[str, int, Callable[[], Any]]]:
    """Clipping with rows spread strictly inside ``(b, b + 1)`` for many candidates ``b``,
    at ``max_rows = n`` (the tightest deadline) and the default, with fine custom bounds,
    the default bounds (also at a large ε, a finer comparison grid) and tenths."""
    cases: list[tuple[str, int, Callable[[], Any]]] = []
    spread = np.random.default_rng(1)
    for n in (1000, 65536):
        inside = 36 + spread.random(n)
        wide = spread.random(n) * 2.0**40
        for label, rows, grid, epsilon in (
                ("fine bounds", inside, FINE_BOUNDS, 1.0),
                ("tenths", inside, TENTHS_BOUNDS, 1.0),
                ("default bounds", wide, None, 1.0),
                ("default bounds eps=1000", wide, None, 1000.0)):
            for max_rows in sorted({n, 65536}):
                name = f"{label} max_rows={max_rows}"
                chosen = DEFAULT_CLIP_BOUNDS if grid is None else grid
                cases.append((f"choose_clip_bound {name}", n,
                              lambda r=rows, g=chosen, e=epsilon, m=max_rows: choose_clip_bound(
                                  r, e, bounds=g, rng=SOURCE, max_rows=m)))
                cases.append((f"auto_avg {name}", n,
                              lambda r=rows, g=grid, e=epsilon, m=max_rows: auto_avg(
                                  r, e, bounds=g, rng=SOURCE, max_rows=m)))
    return cases


#: The randomized rounding of the base-2 exponential mechanism (issue 18): losses that are
#: integers, the same with one or every loss made non-integer (short or long fractional
#: parts; negative ones, whose parts ``1 - 0.1...`` are not doubles; subnormal ones), all
#: in bounds [-8, 8], up to 10**6 outcomes for the fast method and 1000 for the exact ones.
#: ``main`` prints each one's median against the integers' at the same size and method,
#: measured in the same run.
ROUNDING_SIZES = {"fast": (1, 64, 65, 1000, 10_000, 100_000, 1_000_000),
                  "full": (1, 64, 65, 1000), "search": (1, 64, 65, 1000)}
ROUNDING_KINDS = ("integers", "one half", "halves", "long fractions", "negative fractions",
                  "subnormal")


def _rounding_losses(kind: str, n: int) -> np.ndarray:
    """Losses in ``[-8, 8]`` of one kind of :data:`ROUNDING_KINDS`, ``n`` of them."""
    integers = np.arange(n) % 7 * 1.0
    if kind == "integers":
        return integers
    if kind == "one half":
        integers[-1] += 0.5
        return integers
    if kind == "halves":
        return integers + 0.5
    if kind == "long fractions":
        return integers + 0.1 + np.arange(n) * 2.0**-40
    if kind == "negative fractions":
        return -integers - 0.1 - np.arange(n) * 2.0**-40
    if kind == "subnormal":
        return np.where(np.arange(n) % 2 == 0, 5e-324, -5e-324)
    raise ValueError(kind)


def _rounding_cases(eta: Eta) -> list[tuple[str, int, Callable[[], Any]]]:
    """Each method on each kind of :data:`ROUNDING_KINDS` at each of its
    :data:`ROUNDING_SIZES`."""
    cases: list[tuple[str, int, Callable[[], Any]]] = []
    for method, sizes in ROUNDING_SIZES.items():
        for n in sizes:
            for kind in ROUNDING_KINDS:
                losses = _rounding_losses(kind, n)
                cases.append((f"base2 {method} rounding {kind}", n,
                              lambda u=losses, m=method: base2_exponential_mechanism(
                                  u, eta, utility_min=-8, utility_max=8, method=m,
                                  rng=SOURCE)))
    return cases


#: Explicit precisions of the base-2 exponential mechanism: a large one and the largest
#: allowed (:data:`~dpkit.exponential.DEFAULT_MAX_PRECISION`), whose deadlines grow with it.
PRECISIONS = {"2**20": 1 << 20, "max 2**27": DEFAULT_MAX_PRECISION}


def _precision_cases(eta: Eta) -> list[tuple[str, int, Callable[[], Any]]]:
    """The base-2 exponential mechanism at large explicit precisions, every method, with
    utilities that hold fractional parts (randomized rounding, several exponent levels)."""
    cases: list[tuple[str, int, Callable[[], Any]]] = []
    for label, bits in PRECISIONS.items():
        for method in ("fast", "full", "search"):
            for n in (2, 64):
                utilities = np.arange(n) % 7 + 0.5
                cases.append((f"base2 {method} precision={label}", n,
                              lambda u=utilities, m=method, p=bits:
                              base2_exponential_mechanism(u, eta, utility_min=0, utility_max=8,
                                                          method=m, precision=p, rng=SOURCE)))
    return cases


def _runs_cases(bounds: tuple[int, ...]) -> list[tuple[str, int, Callable[[], Any]]]:
    """The simulation helpers, whose size is runs · answers (or candidates): no run stops
    early (answers far below the threshold), answers as floats with long expansions and as
    Decimals; ``sample_releases`` as ``laplace_mechanism`` on ``n`` values."""
    cases: list[tuple[str, int, Callable[[], Any]]] = []
    for n in (1, 64, 1000):
        for runs in (1, 100, 2000):
            for kind, answers in (("long", [0.1 + i * 2.0**-40 for i in range(n)]),
                                  ("Decimals", [Decimal("0.1")] * n),
                                  ("longest Decimals", [LONGEST_DECIMAL] * n),
                                  ("longest Fractions", [LONGEST_FRACTION] * n)):
                cases.append((f"above_threshold_runs {kind} runs={runs}", n * runs,
                              lambda a=answers, r=runs: above_threshold_runs(
                                  a, 1e9, 1.0, runs=r, rng=SOURCE)))
    rows = np.arange(1000) % 90 + 0.37
    for runs in (1, 100, 1000):
        cases.append((f"clip_bound_runs inside runs={runs}", runs * len(bounds),
                      lambda r=runs: clip_bound_runs(rows, 1.0, bounds=bounds, runs=r,
                                                     rng=SOURCE, max_rows=rows.size)))
        cases.append((f"auto_avg_runs inside runs={runs}", runs * len(bounds),
                      lambda r=runs: auto_avg_runs(rows, 1.0, bounds=bounds, runs=r,
                                                   rng=SOURCE, max_rows=rows.size)))
    for n in SIZES:
        cases.append(("sample_releases 0.1", n,
                      lambda n=n: sample_releases(0.1, 1.0, 1.0, n, rng=SOURCE)))
    return cases


def _times(call: Callable[[], Any], calls: int) -> np.ndarray:
    """The time of each call inside its (outermost) deadline: from the clock's start to
    the end of the work. Public checks before the clock starts are not padded, so they are
    not counted."""
    call()
    gc.disable()
    try:
        out = np.empty(calls)
        for i in range(calls):
            call()
            out[i] = INSIDE[-1]   # the outermost deadline ends last
    finally:
        gc.enable()
    return out * 1e-9


DEADLINES: list[float] = []
INSIDE: list[int] = []
STEPS: list[int] = []


def _step(clock: timing.Deadline) -> None:
    """Stands in for the wait between two steps of a release in steps (``Deadline.call``):
    records the step's work instead of waiting."""
    STEPS.append(time.perf_counter_ns() - clock._start)


def _record(clock: timing.Deadline, kind: Any, trace: Any) -> None:
    """Stands in for ``Deadline._end`` (the wait at a release's end): records the deadline
    (for a release in steps, the sum of the steps' budgets) and the time inside it (the sum
    of the steps' work, the caller's code between them excluded) instead of waiting."""
    INSIDE.append(time.perf_counter_ns() - clock._start + sum(STEPS))
    STEPS.clear()
    if kind is None:
        DEADLINES.append(clock.budget())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--level-1", action="store_true",
                        help="the fast exponential sampler's level 0 decides nothing, so "
                             "every draw runs level 1 (the worst its deadline covers)")
    parser.add_argument("only", nargs="*", help="run only the functions whose name has one")
    args = parser.parse_args()
    if args.level_1:
        base2._float_level = lambda k, *rest: (0, k.size - 1)  # type: ignore[assignment]
    timing.Deadline._end = _record  # type: ignore[method-assign]
    timing.Deadline._wait = _step  # type: ignore[method-assign]
    timing.set_margin(1)
    ref = timing.reference()
    print(f"reference: U = {ref.scalar * 1e6:.1f} µs, V = {ref.vector * 1e9:.2f} ns; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'function, input':38} {'n':>7} {'median ms':>10} {'median/deadline':>16} "
          f"{'p99/deadline':>13} {'p99.9/deadline':>15}")
    worst: dict[str, float] = {}
    rounding: dict[tuple[str, str, int], float] = {}
    for name, size, call in _cases():
        if args.only and not any(word in name for word in args.only):
            continue
        times = _times(call, max(5, args.calls // max(1, size // 1000)))
        deadline = DEADLINES[-1]
        median, p99, p999 = np.median(times), *np.quantile(times, [0.99, 0.999])
        flag = "  <-- over" if median > deadline else ""
        print(f"{name:38} {size:>7} {median * 1e3:>10.3f} {median / deadline:>16.2f} "
              f"{p99 / deadline:>13.2f} {p999 / deadline:>15.2f}{flag}")
        key = name.split(" ")[0]
        worst[key] = max(worst.get(key, 0.0), median / deadline)
        if " rounding " in name:
            method, kind = name.removeprefix("base2 ").split(" rounding ")
            rounding[method, kind, size] = median
    print("worst median/deadline per function:",
          ", ".join(f"{k} {v:.2f}" for k, v in sorted(worst.items())))
    _print_rounding_ratios(rounding)


def _print_rounding_ratios(medians: dict[tuple[str, str, int], float]) -> None:
    """Each rounding kind's median time over the integers' at the same size and method
    (same run)."""
    for method in ROUNDING_SIZES:
        sizes = [n for n in ROUNDING_SIZES[method] if (method, "integers", n) in medians]
        if not sizes:
            continue
        print(f"base2 {method} rounding: median / median of integer losses at the same n")
        print(f"{'losses':20}" + "".join(f"{n:>11,}" for n in sizes))
        for kind in ROUNDING_KINDS[1:]:
            print(f"{kind:20}" + "".join(
                f"{medians[method, kind, n] / medians[method, 'integers', n]:>11.2f}"
                if (method, kind, n) in medians else f"{'—':>11}" for n in sizes))


if __name__ == "__main__":
    main()
