"""The judge of the Gaussian noise exercise: ``size`` draws of N(0, σ²)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from dpkit.check._common import coerce, lent_generator
from dpkit.course.judges._base import (
    EXTREME_WHERE,
    Judgement,
    PrivacyViolation,
    Raised,
    Rejection,
    binomial_reject,
    call,
    chi2_reject,
    judged,
    ks_reject,
    on_extreme,
    returned_text,
    seeds,
    too_little_noise,
)
from dpkit.course.judges.coding import NEAR as _NEAR
from dpkit.course.judges.noise import ALPHA_PRIVACY as _ALPHA_PRIVACY
from dpkit.course.judges.noise import SEEDED_ALIKE as _SEEDED_ALIKE
from dpkit.course.judges.noise import WHERE as _WHERE
from dpkit.course.judges.noise import far_from_one as _far_from_one
from dpkit.course.judges.noise import log_uniform as _log_uniform
from dpkit.course.judges.noise import written as _written

__all__ = ["GAUSSIAN_CALLS", "judge_gaussian_noise"]

_GAUSS_TAIL = 9.0               # (noise/σ)² > 9: probability 2Φ(−3) under N(0, σ²)
_GAUSSIAN_DP = "(ε, δ)-DP"
#: Probability bound of a Gaussian draw exactly 0.0 for a correct answer: a lattice 2⁻²⁰σ
#: fine puts at most ``2⁻²⁰/√(2π) ≤ 4e-7`` on 0, continuous float noise far less.
_EXACT_GAUSS = 1e-6

# Gaussian: 8 calls of 1,000 to 2,500 draws, 2 of 1 to 5 draws, 2 repeated seeds.
_GAUSS_LARGE, _GAUSS_SMALL, _GAUSS_REPEATS = 8, 2, 2
_ALPHA_GAUSS_CALL_KS, _ALPHA_GAUSS_CALL_VAR = 3e-8, 3e-8
_ALPHA_GAUSS_POOLED_KS, _ALPHA_GAUSS_POOLED_VAR = 8e-8, 1.1e-7
#: The range sweep (adversarial review round 15, C4d: the hidden σ stopped at [0.05, 20] and
#: the sizes at 2,500, which the teaching page published): one call of
#: :data:`_SWEEP_DRAWS` draws per σ of :func:`_sweep_sigmas`, drawn per grading over the
#: whole float range, and one call of many draws (size log-uniform in :data:`_SWEEP_SIZES`);
#: too little noise there is a violation (:func:`too_little_noise` at :data:`_ALPHA_SWEEP`,
#: taken from the pooled KS test's share).
_SWEEP_POINTS, _SWEEP_DRAWS, _SWEEP_SIZES = 16, 20, (20_000, 200_000)
_ALPHA_SWEEP = 3e-8
_ALPHA_GAUSS_ATOM, _ALPHA_GAUSS_TOTAL, _ALPHA_GAUSS_PAIRS = 5e-8, 1e-7, 5e-8
_ALPHA_GAUSS_EXACT = 5e-8
#: Calls of the student's function one :func:`judge_gaussian_noise` makes.
GAUSSIAN_CALLS = _GAUSS_LARGE + _GAUSS_SMALL + _GAUSS_REPEATS + _SWEEP_POINTS + 1


def _sweep_sigmas(rng: np.random.Generator) -> list[float]:
    """The range sweep's σ, at full precision: one in ``[10²⁹⁰, 10³⁰⁰]``, one in
    ``[10⁻³⁰⁰, 10⁻²⁹⁰]``, the others log-uniform in equal bands that split
    ``[10⁻²⁹⁰, 10²⁹⁰]``.

    >>> sigmas = _sweep_sigmas(np.random.default_rng(0))
    >>> len(sigmas), max(sigmas) > 1e290, min(sigmas) < 1e-290
    (16, True, True)
    """
    edges = np.linspace(-290.0, 290.0, _SWEEP_POINTS - 1).tolist()
    bands = [(290.0, 300.0), (-300.0, -290.0), *itertools.pairwise(edges)]
    return [10.0 ** float(rng.uniform(low, high)) for low, high in bands]


def _sweep_violated(fn: Callable[..., Any], calls: list[tuple[float, int, int]],
                    miscounts: list[int]) -> bool:
    """Whether the range sweep's draws have too little noise: ``(|draw/σ| + 1e-6)²`` (the
    1e-6 allows for a lattice 2⁻²⁰σ fine and for float rounding) must not be smaller than
    χ²(1), per call, pooled or in the tail (:func:`too_little_noise`); an error or a result
    of the wrong form raises :class:`Raised` (a wrong number of draws is noted in
    ``miscounts``, :func:`_draws`)."""
    groups = [(np.abs(_draws(fn, sigma, size, seed, miscounts) / sigma) + 1e-6) ** 2
              for sigma, size, seed in calls]
    groups = [g for g in groups if g.size] or [np.zeros(0)]
    return too_little_noise(groups, stats.chi2.cdf, _GAUSS_TAIL,
                            float(2 * stats.norm.sf(math.sqrt(_GAUSS_TAIL))), _ALPHA_SWEEP)


#: How the hidden σ are made, shuffled over the calls: from the analytic calibration of a
#: random (Δ, ε, δ), as the exercise's σ are in real use; drawn at full precision; or
#: rounded to 4 or 2 significant digits, as the public check's (0.3, 4) are (review round
#: 3, N5: no noise unless σ had at most 4 decimals passed with full marks).
_SIGMA_FORMATS = ("calibrated",) * 4 + ("full",) * 2 + ("short",) * 2 + ("shorter",) * 2


def _sigmas(rng: np.random.Generator, count: int) -> list[float]:
    """Hidden σ in [0.05, 20], at least a factor 1.5 from 1 (so σ², √σ and σ differ),
    made as :data:`_SIGMA_FORMATS` says, cycled over ``count`` and shuffled: calibrated
    ones by :func:`dpkit.gaussian_calibration.analytic_sigma` from Δ log-uniform in
    [0.1, 5], ε in [0.1, 3] and δ = 10^-k, k uniform in 4..9; the others log-uniform."""
    from dpkit.gaussian_calibration import analytic_sigma

    sigmas: list[float] = []
    for how in rng.permutation(np.resize(np.array(_SIGMA_FORMATS), count)).tolist():
        while True:
            if how == "calibrated":
                sigma = analytic_sigma(_log_uniform(rng, 0.1, 5.0), _log_uniform(rng, 0.1, 3.0),
                                       10.0 ** -int(rng.integers(4, 10)))
            else:
                sigma = _written(_log_uniform(rng, 0.05, 20.0), how)
            if 0.05 <= sigma <= 20.0 and _far_from_one(sigma):
                sigmas.append(sigma)
                break
    return sigmas


def _draws(fn: Callable[..., Any], sigma: float, size: int, seed: int,
           miscounts: list[int] | None = None) -> np.ndarray:
    """The ``size`` draws ``fn(sigma, size, generator)`` returns, as float64, read as the
    public check reads them: an array of numbers, or a list, a tuple or an array of real
    numbers of any type (``Fraction``, ``Decimal``, ``mpmath.mpf``, NumPy scalars: each
    read by :func:`~dpkit.check._common.coerce`); never booleans or digit strings. With
    ``miscounts``, a number of draws other than ``size`` (none too: an empty result
    releases nothing) is appended to it and the draws are returned as they came, to be
    judged (issue #17, F8: Box–Muller one draw off for odd sizes); without it, it raises
    :class:`Raised`."""
    got = call(fn, sigma, size, lent_generator(seed), where=_WHERE)
    try:
        raw = np.asarray(got)
        draws = np.asarray(raw, dtype=np.float64) if raw.dtype.kind in "iuf" else None
    except (TypeError, ValueError, OverflowError):
        raw, draws = None, None
    if draws is None and raw is not None and raw.ndim == 1:
        read, why = coerce(got, length=raw.size)   # real numbers of other types, item by item
        if why is not None:
            raise Raised(f"{_WHERE}, your function returned {why}")
        draws = np.array(read, dtype=np.float64)
    if draws is None or draws.ndim > 1:
        raise Raised(f"{_WHERE}, your function returned {returned_text(got)}, not `size` "
                        "real numbers (an array, a list or a tuple of them)")
    if draws.size != size and miscounts is None:
        raise Raised(f"{_WHERE}, your function returned {draws.size} draws, not `size`")
    if not np.all(np.isfinite(draws)):
        raise Raised(f"{_WHERE}, your function returned draws that are not finite "
                        "(nan or inf)")
    if draws.size != size and miscounts is not None:
        miscounts.append(draws.size)
    return draws.ravel()


def judge_gaussian_noise(fn: Callable[[float, int, np.random.Generator], Any],
                         rng: np.random.Generator) -> Judgement:
    """Hidden test of ``fn(sigma, size, generator)``: ``size`` draws of N(0, σ²)
    (exercise ``ex-analytic-variance``).

    **Hidden inputs** (from ``rng``): 10 ordinary calls with σ in ``[0.05, 20]`` and at least a
    factor 1.5 from 1 (where σ² and σ differ), made as real σ are (:func:`_sigmas`): 4
    calibrated by ``analytic_sigma`` from a random (Δ, ε, δ), 2 log-uniform at full
    precision, 4 log-uniform rounded to 4 or 2 significant digits, shuffled: 8 of 1,000 to
    2,500 draws and 2 of 1 to 5 draws, each with a fresh generator seeded from ``rng``
    (:func:`~dpkit.check._common.lent_generator`: made like ``default_rng()``).

    **Tests**, with their false-failure probabilities for a correct answer:

    * each result holds finite real numbers (an array, or a list or a tuple of
      real numbers of any type, ``Fraction``, ``Decimal`` and ``mpmath.mpf`` included,
      read item by item as the public check reads them: :func:`_draws`), at least one,
      ``size`` of them: a wrong number of draws (issue #17, F8: Box–Muller one draw off
      for odd sizes) is judged by every test below as it came, and, if none finds a
      privacy violation, is a plain failure at the end (the public point kept: the
      privacy of everything it returned was checked); a call repeated
      with a generator seeded alike returns the same draws, and two calls with different
      seeds do not start with the same standardized draws (the noise comes from ``generator``): 0;
    * per large call: KS test of ``draws/σ`` against N(0, 1) (DKW bound) and a two-sided
      test of ``Σ (draw/σ)²`` against χ²(size): 8 × (3e-8 + 3e-8);
    * pooled over all calls: KS (8e-8) and χ² (1.1e-7);
    * then, if those pass, a point mass: the number of ``|draw/σ| <= 0.01``, one-sided
      exact binomial test against ``1.05·(2Φ(0.01) − 1)``: 5e-8; and the number of draws
      exactly 0.0 against ``1e-6`` (a lattice 2⁻²⁰σ fine puts 4e-7 there): 5e-8;
    * independence: the large calls' totals ``Σ draw/σ`` (each N(0, size): their squares
      over ``size`` sum to χ²(8)), lower tail: 1e-7; the adjacent pairs
      ``(z[2k] ± z[2k+1])/√2``, i.i.d. N(0, 1) for independent draws, their squares
      summed over the large calls (χ²), lower tail, for ``+`` and ``−``: 2 × 5e-8;
    * then the range sweep (adversarial review round 15, C4d): 16 calls of 20 draws, σ
      drawn per grading over the whole float range (:func:`_sweep_sigmas`: one beyond
      10²⁹⁰, one below 10⁻²⁹⁰), and one call of 20,000 to 200,000 draws (log-uniform);
      ``(|draw/σ| + 1e-6)²`` must not be smaller than χ²(1), per call, pooled or in the
      tail (:func:`too_little_noise`): 3e-8, a privacy violation; an error there is a
      plain failure (:func:`~dpkit.course.judges._base.on_extreme`). An answer without
      noise beyond some σ, below some σ or beyond some size is caught whatever the seed,
      unless its key lies where the sweep never draws (a narrow band of σ, more than its
      largest size).

    In all at most **1e-6** (Bonferroni). **Calls**: 29 (:data:`GAUSSIAN_CALLS`), about
    15,000 draws and 20,000 to 200,000 more. **Privacy**: the Gaussian mechanism is private
    for the σ it was
    calibrated with; the variance bug (σ² for σ), too little noise, or noise of another
    shape with the right variance fail the tests. A failure is a **privacy violation**
    (not (ε, δ)-DP, :class:`PrivacyViolation`: no point for the exercise) when one call's
    draws are all equal, differently seeded calls return the same draws (a fixed seed:
    the noise is known), too many draws are (almost) 0 (coordinates released without
    noise), the draws of a call cancel (their total, or adjacent sums) or repeat
    (adjacent differences), so that sums or differences of coordinates are released with
    too little noise (shuffled fixed quantiles, antithetic pairs), or the noise is
    smaller than N(0, σ²) for some σ tried
    (:func:`too_little_noise` on ``(draw/σ)²``: smaller per call or pooled, or fewer
    beyond 3σ than ``2Φ(−3)``; the variance bug for σ < 1); an answer with at least that
    much noise (σ² for σ > 1 only, Laplace noise of the same variance) is called one with
    probability at most 1e-6. The function never sees the data, so its draws cannot
    carry it (the Laplace release's low-digit code, review round 7, E1, has nothing to
    write here). **Not judged**: properties of the floating-point draws beyond their law;
    dependence between coordinates that shrinks neither a call's total nor its adjacent
    sums or differences (weak correlations, or repeats between distant coordinates); a
    point mass or dependence on a call whose marginal tests fail (named as their failure:
    too little noise is still a violation); an answer that detects where it runs (the
    grading sandbox rather than a notebook) and adds noise only there: no test of outputs
    sees it, the teacher reads the code (the static check refuses the obvious environment
    reads).
    """
    sigmas = _sigmas(rng, _GAUSS_LARGE + _GAUSS_SMALL)
    sizes = [int(s) for s in rng.integers(1000, 2501, _GAUSS_LARGE)] + \
        [int(s) for s in rng.integers(1, 6, _GAUSS_SMALL)]
    call_seeds = [int(s) for s in seeds(rng, len(sigmas) + 1)]
    big = int(math.exp(rng.uniform(*(math.log(n) for n in _SWEEP_SIZES))))
    sweep = [*((sigma, _SWEEP_DRAWS) for sigma in _sweep_sigmas(rng)),
             (_log_uniform(rng, 0.05, 20.0), big)]       # drawn last: the inputs above
    sweep_calls = [(sigma, size, int(seed))              # are unchanged
                   for (sigma, size), seed in zip(sweep, seeds(rng, len(sweep)), strict=True)]

    def body() -> str:
        miscounts: list[int] = []       # draws returned where `size` were asked (F8)
        samples = [_draws(fn, sigma, size, seed, miscounts)
                   for sigma, size, seed in zip(sigmas, sizes, call_seeds, strict=False)]
        if not np.array_equal(_draws(fn, sigmas[0], sizes[0], call_seeds[0], miscounts),
                              samples[0]):
            raise Rejection(_SEEDED_ALIKE.format("draws"))
        other = _draws(fn, sigmas[0], sizes[0], call_seeds[-1], miscounts)
        if 2 * sum(z.size for z in samples[:_GAUSS_LARGE]) < sum(sizes):
            raise Raised(f"{_WHERE}, your function returned fewer than half the draws "
                         "asked for, too few for its privacy to be checked")
        standard = [draws / sigma for draws, sigma in zip(samples, sigmas, strict=True)]
        heads = [z[:3] for z in [*standard, other / sigmas[0]] if z.size >= 3]
        for i in range(len(heads)):
            for j in range(i):
                if np.allclose(heads[i], heads[j], rtol=1e-9, atol=0):
                    raise PrivacyViolation("two calls with differently seeded generators "
                                           "returned the same draws, which anyone can then "
                                           "subtract: use the `generator` argument, not a "
                                           "generator of your own with a fixed seed",
                                           _GAUSSIAN_DP)
        verdict = _gaussian_verdict(sigmas, standard)
        try:
            violated = _sweep_violated(fn, sweep_calls, miscounts)
        except Raised as error:
            raise on_extreme(error, "any σ > 0 and any size") from None
        if violated:
            raise PrivacyViolation(f"{EXTREME_WHERE}, your draws have less noise than "
                                   "N(0, σ²): draw the same noise whatever σ and `size`",
                                   _GAUSSIAN_DP)
        if miscounts:       # judged as they came, and private: a plain failure (F8)
            raise Rejection(f"{_WHERE}, your function returned {miscounts[0]} draws, not "
                            "`size`; the draws it returned were judged and showed no privacy "
                            "violation: return exactly `size` draws")
        return verdict

    return judged(body)


def _gaussian_structure(standard: list[np.ndarray]) -> str:
    """The privacy failures the marginal law of the draws can hide, or ``""``.

    * draws (almost) at 0: the count of ``|draw/σ| <= 0.01`` against its probability
      ``2Φ(0.01) − 1`` (5% more allowed for float rounding), and of draws exactly 0.0
      against :data:`_EXACT_GAUSS`, one-sided exact binomial tests;
    * draws that cancel: the large calls' totals ``Σ draw/σ``, each N(0, size), their
      squares over ``size`` summed (χ²(8)), lower tail;
    * neighbours that cancel or repeat: ``(z[2k] ± z[2k + 1])/√2`` are i.i.d. N(0, 1) for
      i.i.d. N(0, 1) draws ``z``: the sum of their squares over the large calls is χ²,
      lower tail, for ``+`` and for ``−``.
    """
    pooled = np.concatenate(standard)
    bound = 1.05 * float(2 * stats.norm.cdf(_NEAR) - 1)
    if binomial_reject(int(np.sum(np.abs(pooled) <= _NEAR)), pooled.size, bound,
                       _ALPHA_GAUSS_ATOM, "greater") or \
            binomial_reject(int(np.sum(pooled == 0)), pooled.size, _EXACT_GAUSS,
                            _ALPHA_GAUSS_EXACT, "greater"):
        return ("too many of your draws are (almost) exactly 0, far more than N(0, σ²) puts "
                "there: a coordinate released without noise is not private")
    large = standard[:_GAUSS_LARGE]
    totals = sum(float(np.sum(z)) ** 2 / z.size for z in large)
    firsts = np.concatenate([z[0:z.size - 1:2] for z in large])
    seconds = np.concatenate([z[1::2] for z in large])
    pairs = [float(np.sum((firsts + sign * seconds) ** 2) / 2) for sign in (1, -1)]
    if stats.chi2.cdf(totals, len(large)) < _ALPHA_GAUSS_TOTAL or any(
            stats.chi2.cdf(x, firsts.size) < _ALPHA_GAUSS_PAIRS for x in pairs):
        return ("the draws of one call depend on each other (they cancel or repeat, so that "
                "sums or differences of the noisy coordinates are released with too little "
                "noise): draw `size` independent values")
    return ""


def _gaussian_verdict(sigmas: list[float], standard: list[np.ndarray]) -> str:
    if any(z.size > 1 and np.all(z == z[0]) for z in standard):
        raise PrivacyViolation("all the draws of one call are the same number: draw `size` "
                               "independent values", _GAUSSIAN_DP)
    ratios = [float(np.sqrt(np.mean(z**2))) for z in standard[:_GAUSS_LARGE]]
    wrong = any(ks_reject(stats.norm.cdf(z), _ALPHA_GAUSS_CALL_KS)
                or chi2_reject(float(np.sum(z**2)), z.size, _ALPHA_GAUSS_CALL_VAR)
                for z in standard[:_GAUSS_LARGE])
    pooled = np.concatenate(standard)
    wrong = wrong or ks_reject(stats.norm.cdf(pooled), _ALPHA_GAUSS_POOLED_KS) or chi2_reject(
        float(np.sum(pooled**2)), pooled.size, _ALPHA_GAUSS_POOLED_VAR)
    if not wrong:
        structure = _gaussian_structure(standard)
        if structure:
            raise PrivacyViolation(structure, _GAUSSIAN_DP)
        return ("your noise has standard deviation σ and the normal shape, for every σ "
                "tried, and independent coordinates")
    large = sigmas[:_GAUSS_LARGE]
    if all(math.isclose(r, s, rel_tol=0.1) for r, s in zip(ratios, large, strict=True)):
        hint = ("the spread is σ², not σ: NumPy's normal(loc, scale) takes the standard "
                "deviation, not the variance")
    elif all(math.isclose(r, 1, rel_tol=0.05) for r in ratios) or not any(
            chi2_reject(float(np.sum(z**2)), z.size, _ALPHA_GAUSS_CALL_VAR)
            for z in [*standard[:_GAUSS_LARGE], np.concatenate(standard)]):  # shape only
        hint = "the spread is right but the shape is not that of a normal distribution"
    elif all(r < 1 for r in ratios):
        hint = "too little noise: a Gaussian mechanism calibrated for σ is then not private"
    elif all(r > 1 for r in ratios):
        hint = "too much noise for the σ asked"
    else:
        hint = "for some σ the spread is too small, for others too large"
    message = f"your draws do not follow N(0, σ²) on hidden inputs: {hint}"
    if too_little_noise([z**2 for z in standard if z.size], stats.chi2.cdf, _GAUSS_TAIL,
                        float(2 * stats.norm.sf(math.sqrt(_GAUSS_TAIL))), _ALPHA_PRIVACY):
        raise PrivacyViolation(message, _GAUSSIAN_DP)
    raise Rejection(message)
