"""The sparse vector technique: AboveThreshold, Sparse, clipping-bound selection, range queries."""

from dpkit.svt.core import (
    CLIP_THRESHOLD_SCALES,
    DEFAULT_CLIP_BOUNDS,
    MAX_RUNS,
    RANGE_ANSWER_LIMIT,
    RUN_EPSILON_RANGE,
    above_threshold,
    above_threshold_runs,
    auto_avg,
    auto_avg_runs,
    choose_clip_bound,
    clip_bound_runs,
    range_queries,
    sparse,
)

__all__ = [
    "CLIP_THRESHOLD_SCALES",
    "DEFAULT_CLIP_BOUNDS",
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
