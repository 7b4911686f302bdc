"""Model answers shared by the tests of the checkers and of the judges (one copy each)."""

from __future__ import annotations

import numpy as np

from dpkit.laplace import laplace_mechanism
from dpkit.svt import DEFAULT_CLIP_BOUNDS, choose_clip_bound


def auto_avg_model(values, epsilon, rng):
    """Exercise ex-svt-auto-avg: the bound with ε/3, then the clipped sum and the count."""
    third = epsilon / 3
    bound = choose_clip_bound(values, third, bounds=DEFAULT_CLIP_BOUNDS, rng=rng)
    if bound is None:
        bound = DEFAULT_CLIP_BOUNDS[-1]
    noisy_sum = laplace_mechanism(float(np.clip(values, 0, bound).sum()), bound, third, rng=rng)
    noisy_count = laplace_mechanism(float(len(values)), 1.0, third, rng=rng)
    return noisy_sum / max(noisy_count, 1.0)
