"""Judge for the division-free sampler of the base-2 exponential mechanism chapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dpkit.check._common import shown
from dpkit.check.exponential import BitsOnly
from dpkit.course.judges._base import (
    Judgement,
    Rejection,
    binomial_reject,
    error_text,
    judged,
    seeds,
)
from dpkit.rng import RandomSource, seeded

__all__ = ["SAMPLER_CALLS", "BitsOnlySource", "judge_division_free_sampler"]

# (name, draws): the four hidden sets of weights.
_SETS = (("modulo", 3000), ("small", 3000), ("wide", 2000), ("huge", 2000))
_REPEATS = 20
_MAX_CELLS = 4 + 8 + 5 + 4          # the most indices the four sets can have
_ALPHA_CELL = 4.5e-8                # per index: 21 cells · 4.5e-8 < 1e-6
#: Calls of the student's sampler one :func:`judge_division_free_sampler` makes.
SAMPLER_CALLS = sum(draws for _, draws in _SETS) + _REPEATS

_UNIFORM_AND_WALK = ("check that your draw in [0, Σw) is exactly uniform (reject a draw ≥ Σw "
                     "and draw again; taking it modulo Σw or clamping it is biased) and "
                     "that index i covers exactly w_i of its values (< , not <=)")
_HINTS = {
    "modulo": _UNIFORM_AND_WALK,
    "small": _UNIFORM_AND_WALK,
    "wide": "for weights beyond 2**64, draw as many bits as Σw needs, not a fixed number",
    "huge": "for weights beyond the float range (near 10**400), work with integers only",
}


class BitsOnlySource(BitsOnly):
    """A seeded source that allows ``bits(k)`` only, as the exercise demands.

    Every other draw raises ``RuntimeError`` naming the method (:class:`dpkit.check.
    exponential.BitsOnly`). A copy or pickle restarts from the seed (the judge hands a
    fresh source to each call).
    """

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        super().__init__(seeded(self.seed))

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (BitsOnlySource, (self.seed,))


def _big(rng: np.random.Generator, below: int) -> int:
    """A uniform integer in ``[0, below)`` for Python ints of any size (from ``rng``)."""
    words = (below.bit_length() + 63) // 64 + 2
    value = 0
    for word in rng.integers(0, 2**63, size=words, dtype=np.int64).tolist():
        value = (value << 63) | word
    return value % below


def _weights(rng: np.random.Generator) -> dict[str, list[int]]:
    """The hidden weights, one list per set.

    * ``modulo``: 3 or 4 weights summing to ``2**m + 1`` (m = 3 or 4), the last one 2:
      where ``bits % Σw`` or a clamped draw is most biased;
    * ``small``: 5 to 8 weights in [1, 12], one of them 1 (an off-by-one shows);
    * ``wide``: 3 to 5 weights ``c·2**64 + r`` (a fixed 64-bit draw cannot reach them);
    * ``huge``: 3 or 4 weights ``c·10**400 + r``, beyond the float range.
    """
    m, parts = int(rng.integers(3, 5)), int(rng.integers(3, 5))
    cuts = np.sort(rng.choice(np.arange(1, 2**m - 1), size=parts - 2, replace=False))
    head = np.diff(np.concatenate([[0], cuts, [2**m - 1]])).tolist()
    small = [int(w) for w in rng.integers(1, 13, size=int(rng.integers(5, 9)))]
    small[int(rng.integers(len(small)))] = 1
    wide = [int(c) * 2**64 + _big(rng, 2**64) for c in rng.integers(1, 5, int(rng.integers(3, 6)))]
    huge = [int(c) * 10**400 + _big(rng, 10**399)
            for c in rng.integers(1, 6, int(rng.integers(3, 5)))]
    return {"modulo": [int(w) for w in head] + [2], "small": small, "wide": wide, "huge": huge}


def _float_hint(error: Exception) -> str:
    if isinstance(error, (OverflowError, ValueError, ZeroDivisionError)):
        return ("; does it convert the weights to floating point somewhere? A float holds "
                "about 16 digits and nothing beyond 1.8e308; compare integers only")
    return ""


def _draw(sampler: Callable[..., Any], weights: list[int], seed: int) -> int:
    where = "on hidden weights"
    try:
        index = sampler(list(weights), BitsOnlySource(seed))
    except Exception as error:  # anything the student's code (or its sandbox) raises
        raise Rejection(f"{where}, your sampler raised {error_text(error)}"
                        f"{_float_hint(error)}") from None
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < len(weights):
        raise Rejection(f"{where}, your sampler returned {shown(index)}: it must return an "
                        "int index i with 0 <= i < len(weights)")
    return int(index)


def judge_division_free_sampler(sampler: Callable[[list[int], RandomSource], int],
                                rng: np.random.Generator) -> Judgement:
    """Hidden test of ``sampler(weights, rng) -> i``: index ``i`` with probability
    ``w_i / Σ w`` from ``rng.bits(k)`` only (exercise ``ex-exp-sampler``).

    **Hidden inputs** (from ``rng``), four sets of positive integer weights: 3–4 weights
    summing to ``2**m + 1`` (m = 3, 4) with the last one 2, where taking random bits
    modulo Σw or clamping them is most biased (3,000 draws); 5–8 weights in [1, 12], one of
    them 1 (3,000 draws); 3–5 weights ``c·2**64 + r`` (2,000 draws); 3–4 weights
    ``c·10**400 + r``, beyond the float range (2,000 draws). Each draw gets a fresh
    :class:`BitsOnlySource` seeded from ``rng``: its ``bits(k)`` is a seeded stream and
    every other method raises, as the exercise allows ``rng.bits(k)`` only.

    **Tests**, with their false-failure probabilities for a correct answer: each result is
    an ``int`` index in range, no other method of ``rng`` is called, and 20 draws repeated
    with sources seeded alike agree (all randomness comes from ``rng``): 0; for every index
    of every set, an exact two-sided binomial test of its count against ``w_i/Σw``: at most
    21 × 4.5e-8. In all at most **1e-6** (Bonferroni).

    **Calls**: 10,020 (:data:`SAMPLER_CALLS`). **Not judged**: "no division, no float" as
    such — only its observable consequences: a float conversion of weights near 10**400
    raises or loses their proportions, and a float uniform cannot be drawn. A sampler that
    divides exact integers, or uses floats only where rounding stays far below the
    statistical resolution, cannot be told from an exact one by its outputs.
    """
    weight_sets = _weights(rng)
    seed_lists = {name: [int(s) for s in seeds(rng, draws)] for name, draws in _SETS}

    def body() -> str:
        for name, draws in _SETS:
            weights = weight_sets[name]
            drawn = [_draw(sampler, weights, seed) for seed in seed_lists[name]]
            counts = np.bincount(drawn, minlength=len(weights))
            repeats = seed_lists[name][:_REPEATS // len(_SETS)]
            if any(_draw(sampler, weights, s) != d for s, d in zip(repeats, drawn, strict=False)):
                raise Rejection("with sources seeded alike your sampler returned different "
                                "indices: take all randomness from rng.bits(k)")
            total = sum(weights)
            for index, (count, weight) in enumerate(zip(counts.tolist(), weights, strict=True)):
                if binomial_reject(count, draws, weight / total, _ALPHA_CELL):
                    raise Rejection(f"on hidden weights, index {index} was drawn "
                                    f"{count / draws:.3f} of the time, not w_{index}/Σw; "
                                    f"{_HINTS[name]}")
        return ("your sampler draws each index with probability w_i/Σw, from random bits "
                "and integer arithmetic only, on weights you have not seen")

    return judged(body)
