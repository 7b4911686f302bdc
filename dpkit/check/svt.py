"""Checkers for the exercises of the sparse vector technique chapter.

Every checker is deterministic (fixed seeds and fixed test points) and returns a
:class:`~dpkit.check.Verdict` whose message says where the answer fails and what is wrong
with it, without stating the expected answer. Statistical checks reject only at p-values
below 1e-7, so a correct answer fails with probability below 1e-6.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import integrate, stats

from dpkit.check._common import call, call_checked, call_number, coerce, lent_source, shown
from dpkit.check._verdict import Verdict
from dpkit.datasets import load_adult
from dpkit.i18n import tr
from dpkit.timing import unpadded

__all__ = [
    "check_above_threshold",
    "check_auto_avg",
    "check_little_noise_cost",
    "check_sparse_scales",
]

_P_REJECT = 1e-7


def check_sparse_scales(fn: Callable[[float, int], tuple[float, float]]) -> Verdict:
    """Check ``fn(epsilon, c)``: the pair (threshold noise scale, query noise scale) of the
    Laplace noises of Sparse (Dwork & Roth 2014, Algorithm 2) with total budget ε and up to
    ``c`` answers above the threshold.

    ``fn`` is called at five points (ε from 0.1 to 2, c from 1 to 10) and passes when it
    returns two finite numbers (a tuple, a list or an array of two), each equal to the
    exact scale to a relative 1e-9. The check is deterministic. A failing verdict names the
    point and, for a recognised mistake (the scales swapped, the budget not split between
    the runs), which; otherwise whether the noise is too little for ε-DP or more than
    needed. It never states the expected scales.
    """
    details = []
    for epsilon, c in ((1.0, 1), (1.0, 3), (0.5, 2), (2.0, 10), (0.1, 4)):
        where = tr("for epsilon={epsilon:g}, c={c}").format(epsilon=epsilon, c=c)
        got = call_checked(fn, epsilon, c, where=where, details=details)
        if isinstance(got, Verdict):
            return got
        want = (2 * c / epsilon, 4 * c / epsilon)
        pair, why = coerce(got, length=2)
        if why is not None:
            return Verdict(False, tr("{where}, your function returned {why}; the pair "
                                     "(threshold scale, query scale) is expected").format(
                                         where=where, why=why), tuple(details))
        if all(math.isclose(g, w, rel_tol=1e-9) for g, w in zip(pair, want, strict=True)):
            details.append(tr("epsilon={epsilon:g}, c={c}: scales {pair} are right").format(
                epsilon=epsilon, c=c, pair=pair))
            continue
        if math.isclose(pair[0], want[1], rel_tol=1e-9) and math.isclose(pair[1], want[0],
                                                                         rel_tol=1e-9):
            hint = tr("the two scales are swapped: the queries get the larger noise")
        elif c > 1 and all(math.isclose(g, w / c, rel_tol=1e-9)
                           for g, w in zip(pair, want, strict=True)):
            hint = tr("these are AboveThreshold's scales for the whole ε; each of the c runs "
                      "only gets ε/c")
        elif pair[0] < want[0] or pair[1] < want[1]:
            hint = tr("too little noise: this would not be ε-DP")
        else:
            hint = tr("more noise than needed: private, but less accurate than Sparse")
        return Verdict(False, tr("{where} the scales {pair} are wrong: {hint}").format(
            where=where, pair=pair, hint=hint), tuple(details))
    return Verdict(True, tr("each of the c runs of AboveThreshold gets ε/c: threshold noise "
                            "Lap(2c/ε), query noise Lap(4c/ε)"), tuple(details[:3]))


def check_little_noise_cost(fn: Callable[[float, int], float]) -> Verdict:
    """Check ``fn(epsilon, c)``: the privacy cost, by the proof of AboveThreshold, of the
    sparse vector variant with threshold noise ``Lap(4/ε)`` drawn once and query noise
    ``Lap(4/(3ε))``, stopping after ``c`` positive answers (Lyu, Su & Li 2017, Algorithm 4;
    ``dpkit.naive.svt_little_query_noise``).

    ``fn`` is called at five points (ε from 0.1 to 2, c from 1 to 10) and passes when every
    result is a finite number equal to the exact cost to a relative 1e-9. The check is
    deterministic. A failing verdict names the point and, for a recognised mistake (a cost
    that does not grow with c, the threshold paid for c times), which; otherwise whether
    the cost is too small or too large. It never states the expected cost.
    """
    details = []
    for epsilon, c in ((1.0, 1), (1.0, 2), (0.5, 3), (2.0, 10), (0.1, 1)):
        where = tr("for epsilon={epsilon:g}, c={c}").format(epsilon=epsilon, c=c)
        value = call_number(fn, epsilon, c, where=where, details=details)
        if isinstance(value, Verdict):
            return value
        want = (1 + 6 * c) / 4 * epsilon
        if not math.isclose(value, want, rel_tol=1e-9):
            if c > 1 and math.isclose(value, (1 + 6) / 4 * epsilon, rel_tol=1e-9):
                hint = tr("the cost must grow with c: each positive answer pays for its own "
                          "shift")
            elif c > 1 and math.isclose(value, c * (1 + 6) / 4 * epsilon, rel_tol=1e-9):
                hint = tr("the threshold is paid for c times, but this variant draws its noisy "
                          "threshold only once (it does not restart like Sparse): how many "
                          "times is the threshold's shift paid?")
            elif value < want:
                hint = tr("too small: count the cost of every shift the proof makes")
            else:
                hint = tr("too large: each shift costs its size divided by its noise's scale")
            return Verdict(False, tr("{where} the cost {value!r} is wrong: {hint}").format(
                where=where, value=value, hint=hint), tuple(details))
        details.append(tr("epsilon={epsilon:g}, c={c}: {value:g} is right").format(
            epsilon=epsilon, c=c, value=value))
    return Verdict(True, tr("the variant claims ε but costs (1 + 6c)ε/4: 1.75ε already for "
                            "c = 1"), tuple(details[:3]))


class _Stream:
    """A lazy, endless stream of constant queries that counts how many were evaluated.

    Pulling or evaluating more than ``limit`` queries raises (so ``list(stream)`` fails
    instead of exhausting the memory)."""

    def __init__(self, answer_of_index: Callable[[int], float], limit: int) -> None:
        self.answer_of_index = answer_of_index
        self.limit = limit
        self.evaluated = 0

    def __iter__(self) -> Iterator[Callable[[Any], float]]:
        for i in itertools.count():
            if i >= self.limit:
                raise RuntimeError(tr("pulled more than {limit} queries from an endless "
                                      "stream").format(limit=self.limit))

            def query(_data: Any, i: int = i) -> float:
                self.evaluated += 1
                if self.evaluated > self.limit:
                    raise RuntimeError(tr("evaluated more than {limit} queries of an endless "
                                          "stream").format(limit=self.limit))
                return self.answer_of_index(i)
            yield query


def _laplace_cdf(x: float, scale: float) -> float:
    return 0.5 * math.exp(x / scale) if x < 0 else 1 - 0.5 * math.exp(-x / scale)


def _prob_none(m: int, answer: float, epsilon: float) -> float:
    """P(AboveThreshold returns None): m queries with the same answer, threshold 0."""
    rho, nu = 2 / epsilon, 4 / epsilon
    reach = 80 * nu + abs(answer)
    return integrate.quad(lambda r: 0.5 / rho * math.exp(-abs(r) / rho)
                          * _laplace_cdf(r - answer, nu) ** m,
                          -reach, reach, points=[0.0, answer], limit=400)[0]


def check_above_threshold(fn: Callable[..., int | None]) -> Verdict:
    """Check ``fn(queries, data, threshold, epsilon, rng)``: an AboveThreshold
    (Dwork & Roth 2014, Algorithm 1) that returns the index of the first query whose noisy
    answer reaches the noisy threshold, or ``None``.

    Passes when it (1) returns ``None``, not an index, when no query can pass; (2) reads an
    endless stream of queries one at a time and stops evaluating at the first pass; (3) has
    the outcome frequencies of threshold noise ``Lap(2/ε)`` and query noise ``Lap(4/ε)``, as
    the algorithm prescribes (two binomial tests over 2000 seeded runs each, rejecting at
    p < 1e-7, so a correct function fails with probability below 2e-7 and the verdict is
    the same at every run). ``rng`` is a :class:`dpkit.rng.RandomSource` (for example, use
    ``rng.numpy_generator()``). Indices count from 0; an index off by one on the stream of
    (2) is named as such.
    """
    details: list[str] = []
    far_below = [lambda _d: -1e9] * 5
    got = call_checked(fn, far_below, None, 0.0, 1.0, lent_source(1),
                       where=tr("on five queries far below the threshold"))
    if isinstance(got, Verdict):
        return got
    if got is not None:
        return Verdict(False, tr("when no query passes, return None, got {value}: a made-up "
                                 "index looks like a real answer and fails silently").format(
                                     value=shown(got)))
    details.append(tr("returns None when nothing passes"))
    stream = _Stream(lambda i: 1e9 if i == 3 else -1e9, limit=100)
    where = tr("on an endless stream whose query 3 is far above the threshold")
    got, error = call(fn, stream, None, 0.0, 1.0, lent_source(2))
    index, why = (None, None) if error or got is None else coerce(got, whole=True)
    if index is not None and abs(index - 3) == 1:
        said = (tr("{where}, your function returned {index}: off by one, one more than the "
                   "index of the query that passed. Indices count from 0 (the first query is "
                   "index 0, as enumerate(queries) counts)") if index > 3 else
                tr("{where}, your function returned {index}: off by one, one less than the "
                   "index of the query that passed. Indices count from 0 (the first query is "
                   "index 0, as enumerate(queries) counts)"))
        return Verdict(False, said.format(where=where, index=index), tuple(details))
    if why is not None:
        return Verdict(False, tr("{where}, your function returned {why}; AboveThreshold "
                                 "returns the index of a query, or None").format(
                                     where=where, why=why), tuple(details))
    if index != 3:
        return Verdict(False, tr("{where}, expected 3, got {value}; take the queries one at a "
                                 "time (no len(), no list()) and stop at the first "
                                 "pass").format(where=where, value=error or shown(got)),
                       tuple(details))
    if stream.evaluated != 4:
        return Verdict(False, tr("stop evaluating at the first pass: query 3 passed but "
                                 "{evaluated} queries were evaluated").format(
                                     evaluated=stream.evaluated), tuple(details))
    details.append(tr("stops at the first pass of an endless stream"))
    runs = 2000
    for m, answer, epsilon in ((3, 0.0, 1.0), (1, 6.0, 0.5)):
        queries = [lambda _d, a=answer: a] * m
        nones = 0
        for run in range(runs):
            got = call_checked(fn, queries, None, 0.0, epsilon, lent_source(100 + run),
                               where=tr("on {m} queries answering {answer:g} at ε = "
                                        "{epsilon:g}").format(m=m, answer=answer,
                                                              epsilon=epsilon),
                               details=details)
            if isinstance(got, Verdict):
                return got
            nones += got is None
        want = _prob_none(m, answer, epsilon)
        p_value = stats.binomtest(nones, runs, want).pvalue
        details.append(tr("{m} queries with answer {answer:g}, ε = {epsilon:g}: None in "
                          "{share:.3f} of runs, expected {want:.3f} (p = {p:.2g})").format(
                              m=m, answer=answer, epsilon=epsilon, share=nones / runs,
                              want=want, p=p_value))
        if p_value < _P_REJECT:
            return Verdict(False, tr("the outcome frequencies do not match threshold noise "
                                     "Lap(2/ε) and query noise Lap(4/ε): None in {share:.3f} "
                                     "of runs, expected {want:.3f}; draw the threshold noise "
                                     "once and a fresh query noise per query, or your noise "
                                     "scales are not 2/ε and 4/ε (larger scales change these "
                                     "frequencies too)").format(share=nones / runs, want=want),
                           tuple(details))
    return Verdict(True, tr("your AboveThreshold returns None honestly, reads a stream lazily "
                            "and adds the right noise"), tuple(details))


def _true_count_denominator(fn: Callable[[Any, float, Any], float],
                            details: list[str]) -> bool | Verdict:
    """Whether ``fn`` divides by the exact number of rows (same seed, two datasets).

    The two datasets differ only by zero rows: every clipping query, the chosen bound and
    the clipped sum are the same, so with the same seed the same noises are drawn. If the
    denominator is the exact count, ``result · rows`` is then the same number for both; a
    noisy count ``rows + C`` breaks that unless its noise ``C`` is exactly 0 (a continuous
    or finely gridded variable), so all five seeds agreeing has negligible probability
    for a correct answer. Returns a failing verdict if ``fn`` raised or returned no number.
    """
    few = np.full(400, 20.0)
    more = np.concatenate([few, np.zeros(600)])
    for seed in range(5):
        a = call_number(fn, few.copy(), 1.0, lent_source(1000 + seed),
                        where=tr("on 400 values of 20"), details=details)
        if isinstance(a, Verdict):
            return a
        b = call_number(fn, more.copy(), 1.0, lent_source(1000 + seed),
                        where=tr("on 400 values of 20 and 600 zeros"), details=details)
        if isinstance(b, Verdict):
            return b
        if not math.isclose(a * len(few), b * len(more), rel_tol=1e-9, abs_tol=1e-9):
            return False
    return True


def check_auto_avg(fn: Callable[[Any, float, Any], float]) -> Verdict:
    """Check ``fn(values, epsilon, rng)``: an ε-DP average that chooses its clipping bound
    privately, then divides a noisy clipped sum by a noisy number of rows (the exercise's
    three steps, ε/3 each).

    Passes when, with fixed seeds:

    1. *accuracy*: at ε = 1 over five seeds, the result is within 1 of the true mean of
       Adult ``age`` (38.58) and ``hours-per-week`` (40.44), and within 2% on a column of
       values near 1000;
    2. *enough noise on the sum*: on 2700 zeros and 300 values of 200 (where the chosen
       bound is at least 200 but for a chance below 1e-6), the error
       ``rows · result − true sum`` of a correct answer exceeds ``t = 0.8·ln 2·600/ε`` in
       each run with probability at least 0.574 (Anderson's inequality applied to the sum's
       Laplace noise), so fewer than 7 of 40 runs above ``t`` has probability below 4e-8;
       a sum with too little noise for ε-DP gives none;
    3. *no exact mean*: no result equals the true mean to 12 significant digits (a noisy
       sum over a noisy count misses it by about ``3b/(ε·rows)``: a correct answer lands
       that close with probability below 1e-6 per call: its sum's noise, on a grid of
       step b·2⁻²⁰, puts at most 2⁻²⁰ε/6 on any one point);
    4. *a noisy denominator*: with the same seed, appending 600 rows of 0 to 400 values
       must not leave ``rows · result`` unchanged, as dividing by the exact number of rows
       would (a deterministic comparison, :func:`_true_count_denominator`).

    A failing verdict names the step and the data it failed on, never the sensitivities or
    the noise scales. A result near 1.0 on every column means the denominator is a noisy
    *sum*, not a noisy *count* of rows.

    The calls run inside :func:`dpkit.timing.unpadded`: they are simulations whose results
    are only judged, never published, so the releases inside them (``choose_clip_bound``'s
    deadline is set by its public ``max_rows``, not by these small columns) need not wait.
    """
    with unpadded():
        return _check_auto_avg(fn)


def _check_auto_avg(fn: Callable[[Any, float, Any], float]) -> Verdict:
    """The checks of :func:`check_auto_avg`, in order."""
    adult = load_adult()
    columns = {
        "age": adult["age"].to_numpy(dtype=np.float64),
        "hours-per-week": adult["hours-per-week"].to_numpy(dtype=np.float64),
        tr("values near 1000"): 1000.0 + np.arange(5000) % 7,
    }
    details = []
    for name, values in columns.items():
        truth = float(values.mean())
        tolerance = 0.02 * truth if truth > 500 else 1.0
        for seed in range(5):
            value = call_number(fn, values.copy(), 1.0, lent_source(seed),
                                where=tr("on {name}").format(name=name), details=details)
            if isinstance(value, Verdict):
                return value
            if abs(value - truth) <= 1e-12 * abs(truth):
                return Verdict(False, tr("on {name} ({rows} rows) your average is the true mean "
                                         "to 12 significant digits: it has no noise; the noise "
                                         "must not depend on the number of rows").format(
                                             name=name, rows=len(values)), tuple(details))
            if abs(value - truth) > tolerance:
                hint = (tr("a result near 1.0 is a noisy sum divided by a noisy sum: divide by "
                           "a noisy count of rows") if abs(value - 1) < 0.2 else
                        tr("check how the budget is split between the three steps and what "
                           "sensitivity each noisy release is calibrated to"))
                return Verdict(False, tr("on {name} (true mean {truth:.4g}) got {value:.4g}, "
                                         "more than {tolerance:.3g} away; {hint}").format(
                                             name=name, truth=truth, value=value,
                                             tolerance=tolerance, hint=hint), tuple(details))
            details.append(tr("{name}, seed {seed}: {value:.4g} (true {truth:.4g})").format(
                name=name, seed=seed, value=value, truth=truth))
    spread_values = np.concatenate([np.zeros(2700), np.full(300, 200.0)])
    true_sum, runs, needed = float(spread_values.sum()), 40, 7
    cut = 0.8 * math.log(2) * 3 * 200 / 1.0
    wide = 0
    for run in range(runs):
        value = call_number(fn, spread_values.copy(), 1.0, lent_source(5000 + run),
                            where=tr("on 2700 zeros and 300 values of 200"), details=details)
        if isinstance(value, Verdict):
            return value
        wide += abs(value * len(spread_values) - true_sum) > cut
    details.append(tr("2700 zeros and 300 values of 200: {wide} of {runs} runs were off by "
                      "more than {cut:.3g} (at least {needed} expected)").format(
                          wide=wide, runs=runs, cut=cut / len(spread_values), needed=needed))
    if wide < needed:
        return Verdict(False, tr("on 2700 zeros and 300 values of 200, only {wide} of {runs} "
                                 "averages were as far from the truth as the clipped sum's "
                                 "noise makes them at least half the time: too little noise "
                                 "for ε-DP; check the sensitivity the noisy sum is calibrated "
                                 "to").format(wide=wide, runs=runs), tuple(details))
    exact = _true_count_denominator(fn, details)
    if isinstance(exact, Verdict):
        return exact
    if exact:
        return Verdict(False, tr("adding rows of 0 changed your average exactly as dividing by "
                                 "the exact number of rows would: the number of rows is "
                                 "private too, so the denominator must be released with "
                                 "noise"), tuple(details))
    details.append(tr("the denominator is noisy"))
    return Verdict(True, tr("your average divides a clipped sum with enough noise for ε-DP by "
                            "a noisy count of rows"), tuple(details[::5]))

