"""Time the exact sparse vector technique against the textbook floating-point version.

Baseline, measured in the same run: the textbook AboveThreshold in floating point
(:func:`dpkit.naive.above_threshold_random_index`, same noise scales, NumPy-free textbook
Laplace sampler), and for clipping bounds the textbook loop that evaluates
``sum(clip(v, 0, b)) - sum(clip(v, 0, b + 1))`` candidate by candidate with float noise.
``dpkit`` rounds to a power-of-two grid and draws exact discrete Laplace noise from random
bits; for clipping bounds it computes every candidate's query from the sorted values once
and draws the noise in vectorised blocks.

Three tables: AboveThreshold on streams of 10 to 1000 queries (the answer is the last
query, so every query is examined); choosing a clipping bound on Adult columns; and 200
runs of the bound selection (``clip_bound_runs``, what the book's figures use) against 200
separate calls.

Run: ``.venv/bin/python benchmarks/svt.py``
"""

from __future__ import annotations

import numpy as np
from exponential import best_time, table_head  # benchmarks/ is on sys.path when run

import dpkit.naive
from dpkit.datasets import load_adult
from dpkit.rng import seeded
from dpkit.svt import DEFAULT_CLIP_BOUNDS, above_threshold, choose_clip_bound, clip_bound_runs

COLUMNS = ("age", "capital-gain")   # the Adult columns whose clipping bound is chosen


def textbook_clip_bound(values: np.ndarray, epsilon: float, bounds: tuple[int, ...],
                        rng: object) -> int:
    """The textbook selection: one float query per candidate, float Laplace noise."""
    queries = [lambda d, b=float(b): float(np.clip(d, 0, b).sum() - np.clip(d, 0, b + 1).sum())
               for b in bounds]
    index = dpkit.naive.above_threshold_random_index(queries, values, -20 / epsilon, epsilon,
                                                     rng)
    return bounds[index]


def stream_table() -> None:
    table_head("AboveThreshold, every query examined (the last one passes), epsilon = 1",
               f"{'queries':>8} {'exact (ms)':>11} {'textbook (ms)':>14} {'ratio':>7}")
    source = seeded(1)
    for length in (10, 100, 1000):
        queries = [lambda _d: -1e9] * (length - 1) + [lambda _d: 1e9]
        ours = best_time(lambda q=queries: above_threshold(q, None, 0.0, 1.0, rng=source))
        base = best_time(lambda q=queries: dpkit.naive.above_threshold_random_index(
            q, None, 0.0, 1.0, source))
        print(f"{length:>8} {ours * 1e3:>11.3f} {base * 1e3:>14.3f} {ours / base:>7.1f}")
    print("(ratio = exact time / textbook time)\n")


def clip_table(adult) -> None:
    table_head(f"choose_clip_bound on Adult ({len(adult):,} rows), epsilon = 1/3, "
               f"{len(DEFAULT_CLIP_BOUNDS):,} candidates",
               f"{'column':>13} {'exact (ms)':>11} {'textbook (ms)':>14} {'ratio':>7} "
               f"{'exact b':>9} {'textbook b':>11}")
    source = seeded(2)
    for column in COLUMNS:
        values = adult[column].to_numpy(dtype=np.float64)
        ours = best_time(lambda v=values: choose_clip_bound(v, 1 / 3, bounds=DEFAULT_CLIP_BOUNDS,
                                                            rng=source))
        base = best_time(lambda v=values: textbook_clip_bound(v, 1 / 3, DEFAULT_CLIP_BOUNDS,
                                                              source), repeats=2)
        b_ours = choose_clip_bound(values, 1 / 3, bounds=DEFAULT_CLIP_BOUNDS, rng=seeded(3))
        b_base = textbook_clip_bound(values, 1 / 3, DEFAULT_CLIP_BOUNDS, seeded(3))
        print(f"{column:>13} {ours * 1e3:>11.1f} {base * 1e3:>14.1f} {ours / base:>7.2f} "
              f"{b_ours:>9} {b_base:>11}")
    print("(ratio = exact time / textbook time)\n")


def runs_table(adult) -> None:
    runs = 200
    table_head(f"{runs} runs of the bound selection, epsilon = 1/3",
               f"{'column':>13} {'vectorised (ms)':>16} {'one by one (ms)':>16} {'ratio':>7}")
    source = seeded(4)
    for column in COLUMNS:
        values = adult[column].to_numpy(dtype=np.float64)
        ours = best_time(lambda v=values: clip_bound_runs(v, 1 / 3, bounds=DEFAULT_CLIP_BOUNDS,
                                                          runs=runs, rng=source), repeats=3)
        base = best_time(lambda v=values: [choose_clip_bound(v, 1 / 3, bounds=DEFAULT_CLIP_BOUNDS,
                                                             rng=source) for _ in range(runs)],
                         repeats=1)
        print(f"{column:>13} {ours * 1e3:>16.1f} {base * 1e3:>16.1f} {ours / base:>7.3f}")
    print("(ratio = vectorised time / one-by-one time)")


def main() -> None:
    adult = load_adult()
    stream_table()
    clip_table(adult)
    runs_table(adult)


if __name__ == "__main__":
    main()
