"""The sparse vector technique: AboveThreshold, Sparse, clipping-bound selection, range queries.

The sparse vector technique (SVT) answers a long, even unbounded, stream of sensitivity-1
queries with one bit each ("below" or "above" a threshold) and charges privacy only for the
queries that come out *above* (Dwork & Roth 2014, Section 3.6). Every public name is
importable from here (``from dpkit.svt import above_threshold``). The modules, each
importing only those above it in this list:

:mod:`~dpkit.svt.core`
    :func:`above_threshold` and :func:`sparse` with exact comparisons (the floating-point
    safety notes), :func:`above_threshold_runs`, and the grid, noise and budget helpers the
    other two modules share.
:mod:`~dpkit.svt.clipping`
    :func:`choose_clip_bound` and :func:`auto_avg`: pick a clipping bound for a sum from the
    data itself, privately, then release a clipped average (the input domain and timing
    notes: the deadline is set by a public bound on the rows, :data:`DEFAULT_MAX_ROWS` unless
    given); :func:`clip_bound_runs`, :func:`auto_avg_runs`, :data:`DEFAULT_CLIP_BOUNDS`.
:mod:`~dpkit.svt.ranges`
    :func:`range_queries`: let Sparse pick which counting queries are large enough to be
    worth answering, then answer those with (discrete) Laplace noise.

Neighbouring datasets: any notion under which every query has sensitivity 1 (for
:func:`choose_clip_bound`, :func:`auto_avg` and counting queries, adding or removing one
row, or changing one row).

References
----------
Dwork, C. and Roth, A. (2014). The Algorithmic Foundations of Differential Privacy,
Section 3.6. Lyu, M., Su, D. and Li, N. (2017). Understanding the Sparse Vector Technique
for Differential Privacy. PVLDB 10(6). Canonne, C., Kamath, G. and Steinke, T. (2020).
The Discrete Gaussian for Differential Privacy. NeurIPS.
"""

from dpkit.svt.clipping import (
    CLIP_THRESHOLD_SCALES,
    DEFAULT_CLIP_BOUNDS,
    DEFAULT_MAX_ROWS,
    MAX_ROWS_LIMIT,
    auto_avg,
    auto_avg_runs,
    choose_clip_bound,
    clip_bound_runs,
)
from dpkit.svt.core import (
    MAX_RUNS,
    RUN_EPSILON_RANGE,
    above_threshold,
    above_threshold_runs,
    sparse,
)
from dpkit.svt.ranges import RANGE_ANSWER_LIMIT, range_queries

__all__ = [
    "CLIP_THRESHOLD_SCALES",
    "DEFAULT_CLIP_BOUNDS",
    "DEFAULT_MAX_ROWS",
    "MAX_ROWS_LIMIT",
    "MAX_RUNS",
    "RANGE_ANSWER_LIMIT",
    "RUN_EPSILON_RANGE",
    "above_threshold",
    "above_threshold_runs",
    "auto_avg",
    "auto_avg_runs",
    "choose_clip_bound",
    "clip_bound_runs",
    "range_queries",
    "sparse",
]
