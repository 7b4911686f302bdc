"""Judge for the division-free sampler of the base-2 exponential mechanism chapter.

**Why a biased sampler is a privacy violation.** The base-2 exponential mechanism is ε-DP
because it returns outcome ``i`` with probability *exactly* ``w_i/W`` (``W = Σ w``): its
proof bounds ``P(i | D)/P(i | D')`` by bounding ``w_i(D)/w_i(D')`` and ``W(D')/W(D)``. A
sampler that returns ``i`` with probability ``β_i(w)·w_i/W`` multiplies that ratio by
``β_i(w)/β_i(w')``, and a bias that changes with the weights (a draw taken modulo ``W``,
whose doubled residues move with ``W``; a clamped draw; an off-by-one at a boundary
between indices) can push it above the bound the mechanism claims. For instance, with
base ``2/3`` and utilities ``(1, 2, 1)`` and ``(0, 3, 0)`` (sensitivity 1), the integer
weights are ``(54, 36, 54)`` and ``(81, 24, 81)`` and the guarantee bounds the ratio by
``(3/2)² = 2.25`` (the exact ratio for outcome 1 is ``(1/4)/(4/31) ≈ 1.94``); a draw of
``bitlen(Σw)`` bits taken modulo ``Σw`` returns outcome 1 with probabilities ``9/32`` and
``3/32``, a ratio of 3. An index that can never be drawn (fixed 64-bit draws for weights
beyond ``2**64``) makes the ratio infinite. The judge cannot know which weights a
mechanism will pass, so a law other than ``w_i/W``, once shown (exactly, or beyond
chance), voids the guarantee and is reported as a :class:`PrivacyViolation`.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from dpkit._checks import check_integer
from dpkit.check.exponential import BitsOnly, float_hint
from dpkit.course.judges._base import (
    SAMPLER_DIVERGED,
    SAMPLER_STOPPED,
    SAMPLER_TOO_MANY_BITS,
    Judgement,
    PrivacyViolation,
    Raised,
    Rejection,
    binomial_reject,
    error_text,
    judged,
    returned_text,
    seeds,
)
from dpkit.rng import RandomSource, seeded

__all__ = ["SAMPLER_CALLS", "BitsOnlySource", "ScriptedBits", "exact_law",
           "judge_division_free_sampler"]

# (name, draws): the hidden sets of weights drawn from, their calls interleaved.
_SETS = (("modulo", 3000), ("small", 3000), ("many", 2000), ("wide", 2000), ("huge", 2000),
         ("long", 300))
_REPEATS = 24                       # 4 per set
_MOST_WEIGHTS = 64                  # the longest "many" list (9 to 64 weights)
#: The "long" set (issue #17: a sampler that switched to argmax above 100 weights passed):
#: its length, log-uniform in this range, drawn per grading; this many marked indices,
#: and as many groups of the others (:func:`_long_weights`).
_LONG_LENGTHS, _LONG_MARKED = (65, 4096), 8
#: Every statistical test's share of the 1e-6: one exact binomial test per index of every
#: set but the long one (at most 5 + 8 + 64 + 16 + 4 = 97), one per cell of the long one
#: (16), and one test of successive results per set (6).
_ALPHA_CELL = 1e-6 / (97 + 2 * _LONG_MARKED + 6)
#: (name, most runs): the sets whose law is enumerated (:func:`exact_law`), in this order.
_ENUMERATED = (("modulo", 512), ("small", 1024), ("many", 1024), ("below", 1024))
_EXACT_BITS, _EXACT_DRAWS = 4096, 256  # one run's most bits and draws, then it is cut off
_EXACT_ENOUGH = Fraction(1, 2**40)     # unexplored mass below this: stop enumerating
#: Calls of the student's sampler one :func:`judge_division_free_sampler` makes (at most).
SAMPLER_CALLS = (sum(draws for _, draws in _SETS) + _REPEATS
                 + sum(runs for _, runs in _ENUMERATED))

_UNIFORM_AND_WALK = ("check that your draw in [0, Σw) is exactly uniform (reject a draw ≥ Σw "
                     "and draw again; taking it modulo Σw or clamping it is biased) and "
                     "that index i covers exactly w_i of its values (< , not <=)")
_HINTS = {
    "modulo": _UNIFORM_AND_WALK,
    "small": _UNIFORM_AND_WALK,
    "many": _UNIFORM_AND_WALK + "; with any number of weights",
    "wide": "for weights beyond 2**64, draw as many bits as Σw needs, not a fixed number",
    "huge": "for weights beyond the float range (near 10**400), work with integers only",
    "long": _UNIFORM_AND_WALK + "; the same way for any number of weights, however many",
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


class ScriptedBits(BitsOnly):
    """A bits-only source whose draws the judge chooses: it answers the first draws from
    ``script`` (``(k, value)`` pairs) and every later draw with 0, recording each draw
    in :attr:`path`, so that the runs of a sampler can walk the tree of all bit strings.

    A draw whose width differs from the script's (the sampler is not a function of its
    bits) sets :attr:`diverged`; a draw past ``most_bits`` bits or ``most_draws`` draws in
    all sets :attr:`cut`. Both raise ``RuntimeError`` in the sampler, and so does every
    later draw. Like :class:`BitsOnlySource`, every other method raises. The sandbox lends
    a source to the student's code (its draws run here), so :attr:`path` sees them.

    >>> source = ScriptedBits([(3, 5)], most_bits=10, most_draws=4)
    >>> source.bits(3), source.bits(2), source.path
    (5, 0, [(3, 5), (2, 0)])

    Not lent in blocks (:attr:`lent_in_blocks`): in the sandbox each draw is a request
    answered here when the sampler makes it, so a run sees no draw before asking for it,
    and :func:`exact_law` reads exactly the draws (and widths) it made.
    """

    lent_in_blocks = False

    def __init__(self, script: list[tuple[int, int]] | tuple[tuple[int, int], ...], *,
                 most_bits: int = _EXACT_BITS, most_draws: int = _EXACT_DRAWS) -> None:
        super().__init__(seeded(0))               # never read: every draw is scripted
        self.script = tuple(script)
        self.path: list[tuple[int, int]] = []
        self.most_bits, self.most_draws = most_bits, most_draws
        self.used = 0
        self.cut = self.diverged = False

    def block(self, n: int, served: list[int]) -> int:
        """Refused: a scripted source answers each draw when it is made.

        Raises
        ------
        RuntimeError
            Always.
        """
        raise RuntimeError("a scripted source answers each draw itself, never in blocks")

    def bits(self, k: int) -> int:
        k = check_integer(k, "k", minimum=0)
        if self.cut or self.diverged:
            raise RuntimeError(SAMPLER_STOPPED)
        step = len(self.path)
        if step < len(self.script):
            width, value = self.script[step]
            if width != k:
                self.diverged = True
                raise RuntimeError(SAMPLER_DIVERGED)
        elif self.used + k > self.most_bits or step >= self.most_draws:
            self.cut = True
            raise RuntimeError(SAMPLER_TOO_MANY_BITS)
        else:
            value = 0
        self.path.append((k, value))
        self.used += k
        return value


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
    * ``many``: 9 to 64 weights in [1, 3] (a sampler must not change with the length);
    * ``wide``: 3 to 16 weights ``c·2**e + r``, ``e`` in [64, 256] (a fixed 64-bit draw
      cannot reach them);
    * ``huge``: 3 or 4 weights ``c·10**400 + r``, beyond the float range.
    """
    m, parts = int(rng.integers(3, 5)), int(rng.integers(3, 5))
    cuts = np.sort(rng.choice(np.arange(1, 2**m - 1), size=parts - 2, replace=False))
    head = np.diff(np.concatenate([[0], cuts, [2**m - 1]])).tolist()
    small = [int(w) for w in rng.integers(1, 13, size=int(rng.integers(5, 9)))]
    small[int(rng.integers(len(small)))] = 1
    many = [int(w) for w in rng.integers(1, 4, size=int(rng.integers(9, _MOST_WEIGHTS + 1)))]
    wide_size, wide_exponent = int(rng.integers(3, 17)), int(rng.integers(64, 257))
    wide = [int(c) * 2**wide_exponent + _big(rng, 2**wide_exponent)
            for c in rng.integers(1, 5, wide_size)]
    huge = [int(c) * 10**400 + _big(rng, 10**399)
            for c in rng.integers(1, 6, int(rng.integers(3, 5)))]
    return {"modulo": [int(w) for w in head] + [2], "small": small, "many": many,
            "wide": wide, "huge": huge}


def _long_weights(rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """The hidden ``long`` set and the cell of each of its indices (issue #17).

    Its length is log-uniform in [65, 4096]; its weights uniform in ``[1, 2**e]``, ``e``
    drawn per grading (half the time in [1, 64], else in [64, 1400]: up to about
    10**420); :data:`_LONG_MARKED` indices at secret places (cells 0 to 7) then get each
    an eighth of the others' sum, so that each holds about 1/16 of Σw, and the other
    indices fall at random into 8 more cells (8 to 15), each about 1/16 of Σw too.
    A sampler that returns the heaviest index, the first, the last or a uniform index
    (whatever the weights) on long lists puts a cell far from its share.

    >>> weights, cells = _long_weights(np.random.default_rng(0))
    >>> 65 <= len(weights) <= 4096 and sorted(set(cells)) == list(range(16))
    True
    """
    length = round(math.exp(rng.uniform(*map(math.log, _LONG_LENGTHS))))
    bits = int(rng.integers(1, 65)) if rng.random() < 0.5 else int(rng.integers(64, 1401))
    weights = [1 + _big(rng, 2**bits) for _ in range(length)]
    places = rng.permutation(length)
    marked = places[:_LONG_MARKED].tolist()
    rest = places[_LONG_MARKED:]
    cells = [0] * length
    for cell, group in enumerate(np.array_split(rest, _LONG_MARKED)):
        for index in group.tolist():
            cells[index] = _LONG_MARKED + cell
    share = max(1, sum(weights[i] for i in rest.tolist()) // _LONG_MARKED)
    for cell, index in enumerate(marked):
        weights[index], cells[index] = share, cell
    return weights, cells


def _exact_weights(rng: np.random.Generator) -> list[int]:
    """The hidden ``below`` set: 3 to 5 weights summing to ``2**m − 1`` (m = 4, 5), one
    of them 1. A rejection sampler that draws ``m`` bits rejects one value in ``2**m``,
    so its tree of bit strings is nearly all explored in a few hundred runs, and a bias in
    its rejection or its walk shows; ``bits % Σw`` gives residue 0 twice."""
    m, parts = int(rng.integers(4, 6)), int(rng.integers(3, 6))
    rest = 2**m - 2                              # the weights but the 1, in parts − 1 pieces
    cuts = np.sort(rng.choice(np.arange(1, rest), size=parts - 2, replace=False))
    pieces = np.diff(np.concatenate([[0], cuts, [rest]])).tolist()
    return [int(w) for w in rng.permutation([1, *pieces])]


def _draw(sampler: Callable[..., Any], weights: list[int], source: RandomSource) -> int | None:
    """The index ``sampler`` returns on ``weights`` with ``source``, or None if the judge
    stopped the run (a :class:`ScriptedBits` cut off or diverged); a :class:`Rejection` if
    it raised or returned something else than an index."""
    where = "on hidden weights"
    stopped = isinstance(source, ScriptedBits)
    try:
        index = sampler(list(weights), source)
    except Exception as error:  # anything the student's code (or its sandbox) raises
        if stopped and (source.cut or source.diverged):
            return None
        raise Raised(f"{where}, your sampler raised {error_text(error)}"
                        f"{'; ' + hint if (hint := float_hint(error)) else ''}") from None
    if stopped and (source.cut or source.diverged):
        return None
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)) \
            or not 0 <= index < len(weights):
        raise Raised(f"{where}, your sampler returned {returned_text(index)}: it must "
                        "return an int index i with 0 <= i < len(weights)")
    return int(index)


def exact_law(sampler: Callable[[list[int], RandomSource], Any], weights: list[int],
              most_runs: int) -> tuple[list[Fraction], Fraction]:
    """The law of ``sampler`` on ``weights``, from all the strings of random bits it may read:
    ``(found, rest)`` with ``found[i] <= P(i) <= found[i] + rest``, exactly.

    Each run gets a :class:`ScriptedBits` source that replays a prefix of draws and answers
    0 to the new ones; the values of each new draw ``bits(k)`` not taken (1 to ``2**k − 1``)
    are prefixes still to run, each of probability ``2**-(bits read through it)``. Runs go
    heaviest prefix first; a finished run adds its probability to its index. A sampler that
    reads a bounded number of bits is enumerated completely (``rest = 0``) when it has at
    most ``most_runs`` bit strings: ``bits(k) % Σw`` for ``k`` up to about 9 here. One that
    rejects and draws again may read without bound: the enumeration stops after
    ``most_runs`` runs, or once ``rest`` (the probability of the prefixes not run, and of
    runs cut off past 4,096 bits or 256 draws) is below ``2**-40``, and ``rest`` bounds
    what it missed. Exact for a sampler that is a function of the bits it reads (no other
    randomness, no state kept between calls).

    Raises
    ------
    Rejection
        If a run raises or returns no index, or asks for other draws than an earlier run
        on the same bits.

    >>> def walk(weights, rng):
    ...     t = rng.bits(2)
    ...     return 0 if t < weights[0] else 1
    >>> exact_law(walk, [1, 3], 10)
    ([Fraction(1, 4), Fraction(3, 4)], Fraction(0, 1))
    """
    found = [Fraction(0)] * len(weights)
    pending: list[tuple[int, int, tuple[tuple[int, int], ...], int, int]] = [(0, 0, (), 0, 0)]
    count, runs, rest = 1, 0, Fraction(1)
    while pending and runs < most_runs and rest >= _EXACT_ENOUGH:
        depth, _, prefix, value, last = heapq.heappop(pending)
        script = prefix
        if prefix:                             # the values value..last of prefix's last draw
            script = (*prefix[:-1], (prefix[-1][0], value))
            if value < last:
                heapq.heappush(pending, (depth, count, prefix, value + 1, last))
                count += 1
        source = ScriptedBits(script)
        index = _draw(sampler, weights, source)
        runs += 1
        if source.diverged:
            raise Rejection("on the same random bits your sampler asked for other draws: take "
                            "all randomness from rng.bits(k), and keep no state between calls")
        for step in range(len(script), len(source.path)):    # new draws: their other values
            width = source.path[step][0]
            depth_here = sum(k for k, _ in source.path[:step + 1])
            if width:
                heapq.heappush(pending, (depth_here, count, tuple(source.path[:step + 1]), 1,
                                         2**width - 1))
                count += 1
        if index is not None:
            mass = Fraction(1, 2**source.used)
            found[index] += mass
            rest -= mass
    return found, rest


def judge_division_free_sampler(sampler: Callable[[list[int], RandomSource], int],
                                rng: np.random.Generator) -> Judgement:
    """Hidden test of ``sampler(weights, rng) -> i``: index ``i`` with probability
    ``w_i / Σ w`` from ``rng.bits(k)`` only (exercise ``ex-exp-sampler``).

    **Hidden inputs** (from ``rng``), six sets of positive integer weights
    (:func:`_weights`): 3–4 weights summing to ``2**m + 1`` (m = 3, 4) with the last one 2,
    where taking random bits modulo Σw or clamping them is most biased (3,000 draws); 5–8
    weights in [1, 12], one of them 1 (3,000 draws); 9–64 weights in [1, 3] (2,000 draws);
    3–16 weights ``c·2**e + r``, ``e`` in [64, 256] (2,000 draws); 3–4 weights
    ``c·10**400 + r``, beyond the float range (2,000 draws); a long list of 65 to 4,096
    weights of up to 1 to 1,400 bits, both drawn per grading, 8 of them at secret places
    holding about 1/16 of Σw each (300 draws, :func:`_long_weights`; issue #17: a sampler
    that switched to the heaviest index above 100 weights passed when the lists stopped at
    64); 3–5 weights summing to ``2**m − 1`` (m = 4, 5), one of them 1 (enumerated only,
    :func:`_exact_weights`). The draws of the first six sets are made in one secretly
    shuffled order, each with a fresh
    :class:`BitsOnlySource` seeded from ``rng``: its ``bits(k)`` is a seeded stream and every
    other method raises, as the exercise allows ``rng.bits(k)`` only.

    **Tests**, with their false-failure probabilities for a correct answer: each result is
    an ``int`` index in range, no other method of ``rng`` is called, and 20 draws repeated
    with sources seeded alike agree (all randomness comes from ``rng``): 0; for every index
    of every set drawn but the long one, an exact two-sided binomial test of its count
    against ``w_i/Σw``, and on the long one the same per cell (each marked index, and 8
    random groups of the others: 16 cells of about 1/16 of Σw, so that a switch on the
    length is seen with a few hundred draws);
    for every set drawn, the results of its calls in the order they were made, paired
    (1st with 2nd, 3rd with 4th, …): the number of pairs that agree is Binomial(pairs,
    Σ p_i²) for independent draws (exact two-sided binomial test), which a sampler that
    hands out each index its share in turn, whatever its bits, fails by far; each at most
    1e-6/119 (at most 97 indices, 16 cells and 6 sets); on the modulo, small, many and ``2**m − 1``
    sets, the exact law (:func:`exact_law`: every string of random bits the sampler may
    read, up to 512, 1,024, 1,024 and 1,024 runs) must allow ``w_i/Σw`` for every index,
    ``found_i <= w_i/Σw <= found_i + rest``: 0 (exact arithmetic, no chance involved). In
    all at most **1e-6** (Bonferroni).

    The enumeration catches what sampling cannot: a draw of ``k`` bits taken modulo Σw is
    biased by about ``Σw/2**k``, within a few standard errors of 3,000 draws once ``k``
    exceeds the bits Σw needs by three or four, but its law is exact after ``2**k`` runs
    (``k`` up to 9 on the modulo set, 10 on the others). It runs on sets the sampling also
    uses, of every shape drawn (any Σw, not only ``2**m − 1``), so a sampler that is exact
    only on lists it recognises as enumerated must be exact on the sets sampled too. A
    sampler that rejects draws reads an unbounded number of bits, so the enumeration stops
    and bounds what it has not seen by ``rest``: on ``2**m − 1`` a rejection sampler that
    draws ``m`` bits rejects one value in ``2**m`` and leaves ``rest`` below ``2**-40``
    after 150 to 250 runs, so a bias in its rejection or its walk shows. Where a sampler
    rejects often (on ``2**m + 1`` nearly half the draws, or one that draws each index in
    turn), ``rest`` stays large and the enumeration decides nothing: it never fails a
    correct sampler, and sampling covers the rest.

    **Privacy**: a law other than ``w_i/Σw``, shown by the binomial tests or the
    enumeration, voids the exponential mechanism's ε-DP guarantee (see the module
    docstring; an index that is never drawn makes the ratio infinite), and results that
    depend on each other across calls (a deterministic quota: its first result is the
    heaviest index, whatever the bits) are not ε-DP for any ε, as a deterministic function
    of the data is not: both are reported as a :class:`PrivacyViolation` (no point for the
    exercise). Errors, wrong types and randomness not from ``rng.bits`` are not.

    **Calls**: at most 15,908 (:data:`SAMPLER_CALLS`; about 15,100 for the model solution).
    **Not judged**: "no division, no float" as such — only its observable consequences: a
    float conversion of weights near 10**400 raises or loses their proportions, and a float
    uniform cannot be drawn. A sampler that divides exact integers, or uses floats only
    where rounding stays far below the statistical resolution, cannot be told from an exact
    one by its outputs; nor can a modulo bias of a draw far wider than Σw (``2**k`` runs,
    or useless bits read first, multiply the runs the enumeration needs), a sampler that
    is exact on every list it is shown and biased only on others (a narrow band of
    lengths the grading did not draw, more than 4,096 weights, a small bias on long lists
    that 300 draws in 16 cells do not resolve), or one that keeps state between calls to
    replay a generator of its own with a
    constant seed (indistinguishable from random by its outputs; only the repeat test
    sees state, and a cache of its answers passes it).
    """
    weight_sets = _weights(rng)
    seed_lists = {name: [int(s) for s in seeds(rng, draws)] for name, draws in _SETS}
    weight_sets["below"] = _exact_weights(rng)   # drawn last: the inputs above are unchanged
    weight_sets["long"], long_cells = _long_weights(rng)
    order = [(name, j) for name, draws in _SETS for j in range(draws)]
    order = [order[k] for k in rng.permutation(len(order))]

    def body() -> str:
        drawn: dict[str, list[int]] = {name: [] for name, _ in _SETS}   # in call order
        by_seed: dict[tuple[str, int], int | None] = {}
        for name, j in order:                   # the sets' calls, interleaved secretly
            index = _draw(sampler, weight_sets[name], BitsOnlySource(seed_lists[name][j]))
            drawn[name].append(index)
            by_seed[name, j] = index
        for name, draws in _SETS:
            weights = weight_sets[name]
            if any(_draw(sampler, weights, BitsOnlySource(seed_lists[name][j]))
                   != by_seed[name, j] for j in range(_REPEATS // len(_SETS))):
                raise Rejection("with sources seeded alike your sampler returned different "
                                "indices: take all randomness from rng.bits(k)")
            if name == "long":                  # per cell: 16 tests, not thousands
                cells = [long_cells[i] for i in drawn[name]]
                cell_weights = [0] * (2 * _LONG_MARKED)
                for index, weight in enumerate(weights):
                    cell_weights[long_cells[index]] += weight
                _check_counts(cells, cell_weights, draws, _HINTS[name], "cell of indices")
                _check_pairs(cells, cell_weights)
            else:
                _check_counts(drawn[name], weights, draws, _HINTS[name])
                _check_pairs(drawn[name], weights)
        for name, runs in _ENUMERATED:
            _check_exact(sampler, weight_sets[name], runs)
        return ("your sampler draws each index with probability w_i/Σw, from random bits "
                "and integer arithmetic only, on weights you have not seen")

    return judged(body)


def _check_counts(drawn: list[int], weights: list[int], draws: int, hint: str,
                  what: str = "index") -> None:
    """A :class:`PrivacyViolation` if an index's count is not Binomial(draws, w_i/Σw)
    (``what``: ``"cell of indices"`` when the results are cells, of summed weights)."""
    counts = np.bincount(drawn, minlength=len(weights))
    total = sum(weights)
    for index, (count, weight) in enumerate(zip(counts.tolist(), weights, strict=True)):
        if binomial_reject(count, draws, weight / total, _ALPHA_CELL):
            share = f"w_{index}/Σw" if what == "index" else "its share of Σw"
            raise PrivacyViolation(f"on hidden weights, {what} {index} was drawn "
                                   f"{count / draws:.3f} of the time, not {share}; {hint}")


def _check_pairs(drawn: list[int], weights: list[int]) -> None:
    """A :class:`PrivacyViolation` if successive results (in the order of the calls,
    paired 1st–2nd, 3rd–4th, …) agree more or less often than independent draws do: the
    agreeing pairs are Binomial(pairs, Σ p_i²) when every call draws afresh."""
    total = sum(weights)
    same = Fraction(sum(w * w for w in weights), total * total)
    pairs = len(drawn) // 2
    agree = sum(drawn[2 * j] == drawn[2 * j + 1] for j in range(pairs))
    if binomial_reject(agree, pairs, float(same), _ALPHA_CELL):
        raise PrivacyViolation(f"on hidden weights, two successive results of your sampler "
                               f"were the same index in {agree / pairs:.3f} of the pairs of "
                               f"calls, not in Σ(w_i/Σw)² of them as for independent draws: "
                               "its results depend on each other (or on something else than "
                               "the random bits); each call must draw afresh from "
                               "rng.bits(k), with no state kept between calls")


def _check_exact(sampler: Callable[..., Any], weights: list[int], most_runs: int) -> None:
    """A :class:`PrivacyViolation` if the exact law of ``sampler`` on ``weights`` cannot be
    ``w_i/Σw`` (:func:`exact_law`)."""
    found, rest = exact_law(sampler, weights, most_runs)
    total = sum(weights)
    for index, (low, weight) in enumerate(zip(found, weights, strict=True)):
        target = Fraction(weight, total)
        if low > target or low + rest < target:
            side = (f"at least {float(low):.4f}, more" if low > target
                    else f"at most {float(low + rest):.4f}, less")
            raise PrivacyViolation(f"on hidden weights, going through every string of random "
                                   f"bits your sampler may read shows that it draws index "
                                   f"{index} with probability {side} than w_{index}/Σw (exactly, "
                                   f"not by chance); {_UNIFORM_AND_WALK}")
