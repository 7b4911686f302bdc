"""What every judge shares: the :class:`Judgement`, calling the student's function, the tests.

A judge stops at the first failure: the helpers raise :class:`Rejection` with the sentence
for the student, and :func:`judged` turns it into a failing :class:`Judgement`. Every
statistical test here has a *rigorous* bound on its false-rejection probability (no
asymptotic approximation is trusted in the far tail):

* :func:`ks_reject` compares the Kolmogorov–Smirnov distance of probability-integral
  transforms with the Dvoretzky–Kiefer–Wolfowitz bound (Massart 1990):
  ``P(D_n > x) <= 2 exp(-2 n x²)`` for every continuous distribution;
* :func:`binomial_reject` is the exact two-sided binomial test (its p-value is valid);
* :func:`gamma_reject` and :func:`chi2_reject` use the exact law of a sum of i.i.d.
  exponential or squared normal variables.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpkit.check._common import number, shown

__all__ = [
    "ERROR_LENGTH",
    "Judgement",
    "Rejection",
    "binomial_reject",
    "call",
    "chi2_reject",
    "error_text",
    "gamma_reject",
    "judged",
    "ks_reject",
    "ks_statistic",
    "real",
    "seeds",
]

#: The longest ``TypeName: message`` of an exception quoted to the student.
ERROR_LENGTH = 200


@dataclass(frozen=True)
class Judgement:
    """The verdict of a hidden test on a randomized answer.

    Attributes
    ----------
    passed : bool
        Whether the answer earns the hidden test's points.
    message : str
        One sentence for the student: what was found wrong, never an expected value, a
        hidden input or the model solution.
    """

    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        return ("PASSED: " if self.passed else "NOT YET: ") + self.message


class Rejection(Exception):
    """Raised inside a judge to stop at the first failure; its text is the message."""


def judged(body: Callable[[], str]) -> Judgement:
    """Run a judge's ``body``: its return value is the passing message, a
    :class:`Rejection` it raises the failing one."""
    try:
        return Judgement(True, body())
    except Rejection as rejection:
        return Judgement(False, str(rejection))


def error_text(error: BaseException) -> str:
    """``TypeName: message`` of an exception, cut to :data:`ERROR_LENGTH` characters.

    >>> error_text(ValueError("x" * 300))[-3:], len(error_text(ValueError("x" * 300)))
    ('xx…', 200)
    """
    try:
        detail = str(error)
    except Exception:  # a student's exception whose __str__ raises
        detail = "(its message could not be read)"
    text = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return text if len(text) <= ERROR_LENGTH else text[:ERROR_LENGTH - 1] + "…"


def call(fn: Callable[..., Any], *args: Any, where: str) -> Any:
    """``fn(*args)``, or a :class:`Rejection` naming what it raised ``where``."""
    try:
        return fn(*args)
    except Exception as error:  # anything the student's code (or its sandbox) raises
        raise Rejection(f"{where}, your function raised {error_text(error)}") from None


def real(value: Any, *, where: str, what: str = "a finite number") -> float:
    """``value`` as a finite float, or a :class:`Rejection` saying what it was instead."""
    got = number(value)
    if got is None:
        kind = "" if isinstance(value, float) else f" (of type {type(value).__name__})"
        raise Rejection(f"{where}, your function returned {shown(value)}{kind}, not {what}")
    return got


def seeds(rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """Seeds for the student's random sources, drawn from the judge's generator."""
    return rng.integers(0, 2**62, size=size, dtype=np.int64)


def ks_statistic(u: np.ndarray) -> float:
    """Kolmogorov–Smirnov distance between the empirical law of ``u`` and uniform [0, 1]."""
    u = np.sort(np.asarray(u, dtype=np.float64))
    n = u.size
    ranks = np.arange(1, n + 1) / n
    return float(max(np.max(ranks - u), np.max(u - (ranks - 1 / n))))


def ks_reject(u: np.ndarray, alpha: float, slack: float = 0.0) -> bool:
    """Whether probability-integral transforms ``u`` are too far from uniform.

    Rejects when ``D_n > sqrt(ln(2/α) / (2n)) + slack``: probability at most ``α`` for i.i.d.
    transforms through the true continuous CDF (Massart's DKW inequality). ``slack`` bounds
    how far the CDF used may be from the true one (a fine lattice approximating a continuous
    law): a true deviation ``<= slack`` keeps the bound.
    """
    n = len(u)
    return ks_statistic(u) > math.sqrt(math.log(2 / alpha) / (2 * n)) + slack


def binomial_reject(k: int, n: int, p: float, alpha: float,
                    alternative: str = "two-sided") -> bool:
    """The exact binomial test of ``P = p`` (``alternative`` as :func:`scipy.stats.binomtest`)."""
    return bool(stats.binomtest(int(k), int(n), float(p), alternative=alternative).pvalue
                < alpha)


def gamma_reject(total: float, shape: int, alpha: float) -> bool:
    """Two-sided test that ``total`` is a sum of ``shape`` i.i.d. Exp(1) variables."""
    return bool(2 * min(stats.gamma.cdf(total, shape), stats.gamma.sf(total, shape)) < alpha)


def chi2_reject(total: float, df: int, alpha: float) -> bool:
    """Two-sided test that ``total`` is a sum of ``df`` squared i.i.d. N(0, 1) variables."""
    return bool(2 * min(stats.chi2.cdf(total, df), stats.chi2.sf(total, df)) < alpha)

