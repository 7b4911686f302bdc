"""What every judge shares: the :class:`Judgement`, calling the student's function, the tests.

A judge stops at the first failure: the helpers raise :class:`Rejection` with the sentence
for the student, or :class:`PrivacyViolation` when the failure shows that the answer is not
private (too little noise, a budget overspent, a parameter taken from the data), and
:func:`judged` turns it into a failing :class:`Judgement` (with ``privacy=True`` for the
latter: the grade of the whole exercise is then 0). Every
statistical test here has a *rigorous* bound on its false-rejection probability (no
asymptotic approximation is trusted in the far tail):

* :func:`ks_reject` compares the Kolmogorov–Smirnov distance of probability-integral
  transforms with the Dvoretzky–Kiefer–Wolfowitz bound (Massart 1990):
  ``P(D_n > x) <= 2 exp(-2 n x²)`` for every continuous distribution;
* :func:`binomial_reject` is the exact two-sided binomial test (its p-value is valid);
* :func:`gamma_reject` and :func:`chi2_reject` use the exact law of a sum of i.i.d.
  exponential or squared normal variables;
* :func:`too_little_noise` (which says whether a failure is a privacy violation) uses the
  same laws, one-sided, and the exact binomial test.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
from scipy import stats

from dpkit.audit import clopper_pearson
from dpkit.check._common import number, shown
from dpkit.check.exponential import BITS_ONLY_REFUSAL, REFUSED_DRAWS
from dpkit.course.wire import Unreadable

__all__ = [
    "ERROR_LENGTH",
    "EVALUATED_AFTER_PASS",
    "EXTREME_WHERE",
    "GRADER_MESSAGES",
    "SAMPLER_DIVERGED",
    "SAMPLER_STOPPED",
    "SAMPLER_TOO_MANY_BITS",
    "STREAM_OVERREAD",
    "Judgement",
    "PrivacyViolation",
    "Raised",
    "Rejection",
    "apart",
    "binomial_reject",
    "call",
    "chi2_reject",
    "dp_violated",
    "error_text",
    "gamma_reject",
    "judged",
    "ks_reject",
    "ks_statistic",
    "on_extreme",
    "real",
    "returned_text",
    "rounding_errors",
    "seeds",
    "too_little_noise",
]

#: The longest ``TypeName (in …)`` of an exception quoted to the student.
ERROR_LENGTH = 200
#: The errors of the objects a judge lends (an AboveThreshold query stream, a scripted
#: bits source): raised by them, quoted to the student through :data:`GRADER_MESSAGES`.
EVALUATED_AFTER_PASS = "evaluated a query after one had already passed the threshold"
STREAM_OVERREAD = "pulled far more queries from an endless stream than AboveThreshold needs"
SAMPLER_STOPPED = "the judge stopped this run of your sampler"
SAMPLER_TOO_MANY_BITS = SAMPLER_STOPPED + ": too many bits"
SAMPLER_DIVERGED = "your sampler asked for other draws than on the same bits before"
#: The only messages of a student's error a hidden test quotes: the grader's own, raised by
#: the objects a judge lends the student's code (a bits-only source, a query stream) and
#: passed on by it. Fixed texts, so they carry nothing of the hidden inputs.
GRADER_MESSAGES = re.compile("|".join(re.escape(text) for text in [
    *(BITS_ONLY_REFUSAL.format(what=what) for what in REFUSED_DRAWS),
    EVALUATED_AFTER_PASS, STREAM_OVERREAD, SAMPLER_STOPPED, SAMPLER_TOO_MANY_BITS,
    SAMPLER_DIVERGED]))


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
    privacy : bool
        Whether the failure is a privacy violation (the answer is shown not to be
        differentially private: too little noise, a budget spent more than once, a
        parameter taken from the data); such an answer earns no point of its exercise,
        the public test's included. False for a passing judgement and for a failure of
        accuracy or form only.
    raised : bool
        Whether the judge stopped because the student's function raised (or its sandbox
        stopped it: a time-out, a crash) on a hidden input, so its privacy could not be
        judged (:class:`Raised`); grading then withholds the public point too, as an
        answer that raises only where the public check never looks would otherwise keep
        it whatever its privacy.

    Raises
    ------
    ValueError
        If ``passed`` and ``privacy`` or ``raised`` are both true (both are failures).
    """

    passed: bool
    message: str
    privacy: bool = False
    raised: bool = False

    def __post_init__(self) -> None:
        if self.passed and (self.privacy or self.raised):
            raise ValueError(f"a Judgement cannot both pass and be a privacy violation or an "
                             f"error, got passed=True, privacy={self.privacy} and "
                             f"raised={self.raised}")

    def __bool__(self) -> bool:
        return self.passed

    def __str__(self) -> str:
        prefix = "PASSED: " if self.passed else "NOT PRIVATE: " if self.privacy \
            else "NOT YET: "
        return prefix + self.message


class Rejection(Exception):
    """Raised inside a judge to stop at the first failure; its text is the message."""


class Raised(Rejection):
    """A :class:`Rejection` because the student's function raised, or its sandbox stopped
    it, on a hidden input (:func:`call`): the judge could not reach its verdict."""


class PrivacyViolation(Rejection):
    """A :class:`Rejection` that shows the answer is not private.

    Its text starts with what is broken, ``"not ε-DP: "`` (or ``guarantee``: the Gaussian
    exercise's is ``"(ε, δ)-DP"``), then the message.

    >>> str(PrivacyViolation("too little noise"))
    'not ε-DP: too little noise'
    """

    def __init__(self, message: str, guarantee: str = "ε-DP") -> None:
        super().__init__(f"not {guarantee}: {message}")


def judged(body: Callable[[], str]) -> Judgement:
    """Run a judge's ``body``: its return value is the passing message, a
    :class:`Rejection` it raises the failing one (a privacy violation if it is a
    :class:`PrivacyViolation`, an error of the student's code if it is :class:`Raised`)."""
    try:
        return Judgement(True, body())
    except Rejection as rejection:
        return Judgement(False, str(rejection),
                         privacy=isinstance(rejection, PrivacyViolation),
                         raised=isinstance(rejection, Raised))


def error_text(error: BaseException) -> str:
    """What a hidden test says of an error the student's code raised: its type and the line
    of the student's code that raised it, **never its message**.

    The message is the student's code's to choose, and on a hidden test it could carry
    the hidden inputs seen so far (``raise ValueError(repr(seen))``) into the feedback; so
    could the name of an exception class of its own, which is shown as such. Only a
    message of the grader's own (:data:`GRADER_MESSAGES`: a lent object refusing a use)
    is quoted, after the type. The line
    is the sandbox's ``where`` (``"your answer to Exercise 2.4, line 5"``), cut to
    :data:`ERROR_LENGTH` characters; an error raised outside the sandbox has none. Public
    tests, whose inputs the student knows, quote messages in full.

    >>> error_text(ValueError("the hidden inputs"))
    'ValueError'
    >>> error = ZeroDivisionError("division by zero")
    >>> error.where = "your answer to Exercise 6.4, line 3"
    >>> error_text(error)
    'ZeroDivisionError (in your answer to Exercise 6.4, line 3)'
    """
    name = type(error).__name__
    known = getattr(builtins, name, None)
    if not (isinstance(known, type) and issubclass(known, BaseException)):
        name = "an exception of a class your code defines"
    try:
        message = str(error)
    except Exception:  # a student's exception whose __str__ raises
        message = ""
    if GRADER_MESSAGES.fullmatch(message):
        name = f"{name}: {message}"
    where = getattr(error, "where", None)
    text = f"{name} (in {where})" if isinstance(where, str) and where else name
    return text if len(text) <= ERROR_LENGTH else text[:ERROR_LENGTH - 1] + "…"


def returned_text(value: Any) -> str:
    """What a hidden test says of a value the student's function returned: a bool, None,
    or a number below 10⁶ in size with at most 6 significant digits as it is
    (:func:`~dpkit.check._common.shown`), another number as "a number", anything else by
    its type only, since a string, a container or a long number could carry the hidden
    inputs into the feedback.

    >>> returned_text(0.5), returned_text("-7174.58,0.318"), returned_text([1, 2])
    ('0.5', 'a value of type str', 'a value of type list')
    >>> returned_text(1267840225134130235605671799), returned_text(267.840225)
    ('a number', 'a number')
    """
    if value is None or isinstance(value, (bool, np.bool_)):
        return shown(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        try:
            x = float(value)
        except OverflowError:       # an int beyond the float range
            return "a number"
        # a large or long number could pack hidden inputs: shown only if short
        if not math.isfinite(x) or (abs(x) < 1e6 and float(f"{x:.6g}") == x):
            return shown(value)
        return "a number"
    if isinstance(value, Unreadable):   # its type's name is the student's to choose
        return "a value that cannot be graded (return a number)"
    return f"a value of type {type(value).__name__}"


def call(fn: Callable[..., Any], *args: Any, where: str) -> Any:
    """``fn(*args)``, or a :class:`Raised` naming what it raised ``where`` (its type and
    line, not its message: :func:`error_text`)."""
    try:
        return fn(*args)
    except Exception as error:  # anything the student's code (or its sandbox) raises
        raise Raised(f"{where}, your function raised {error_text(error)}") from None


@contextlib.contextmanager
def apart(fn: Callable[..., Any], count: int) -> Iterator[Iterator[Callable[..., Any]]]:
    """``count`` stand-ins for the student's function, each calling it in a process of its
    own that remembers nothing of the calls made before (adversarial review round 10, L1:
    an answer that remembers the generators it was lent tells a seed lent again), given
    **one at a time**: make all of a stand-in's calls before taking the next (adversarial
    review round 11, F1: two processes alive together can talk through the kernel).

    In grading, ``fn`` is the sandbox's stand-in, whose ``fresh(count)`` closes the
    notebook's worker, then starts each new worker when the iteration reaches it, after
    closing the one before (:meth:`dpkit.course.grading._Notebook.fresh`): each runs the
    notebook's cells again and nothing else (neither the public check's calls nor the
    earlier tests' reach it), and no two of the student's processes are alive together;
    a local function (a judge's own tests) has one process, and is itself ``count`` times.

    Raises
    ------
    Raised
        From the iteration, if a new worker cannot be made: the notebook's cells fail when
        run again, or time out (a notebook must run again top to bottom as it ran before).
    """
    fresh = getattr(fn, "fresh", None)
    if not callable(fresh):
        yield iter([fn] * count)
        return
    with contextlib.ExitStack() as stack:
        workers = _made(lambda: iter(stack.enter_context(fresh(count))))
        yield _each(workers)


def _each(workers: Iterator[Callable[..., Any]]) -> Iterator[Callable[..., Any]]:
    """The stand-ins ``workers`` makes, one at a time (see :func:`apart`)."""
    while True:
        try:
            worker = _made(lambda: next(workers))
        except StopIteration:
            return
        yield worker


def _made(make: Callable[[], Any]) -> Any:
    """``make()``, an error in making the new workers as a :class:`Raised` (the student's
    cells, run again in a fresh sandbox; :class:`StopIteration` passes)."""
    try:
        return make()
    except StopIteration:
        raise
    except Exception as error:  # the student's cells, run again in a fresh sandbox
        raise Raised("run again in a fresh sandbox for the hidden tests, your notebook "
                     f"raised {error_text(error)}") from None


def real(value: Any, *, where: str, what: str = "a finite number") -> float:
    """``value`` as a finite float, or a :class:`Raised` saying what it was instead: a
    result of the wrong form on a hidden input leaves the judge's privacy verdict as
    unreached as an error does (an answer returning None wherever the public check does not
    look would otherwise keep the public point whatever its privacy)."""
    got = number(value)
    if got is None:
        text = returned_text(value)
        if text == shown(value) and not isinstance(value, float):
            text += f" (of type {type(value).__name__})"
        raise Raised(f"{where}, your function returned {text}, not {what}")
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
    """The exact binomial test of ``P = p`` (``alternative`` as :func:`scipy.stats.binomtest`);
    with no trials (``n == 0``: every case left out) nothing is rejected.

    >>> binomial_reject(0, 0, 0.5, 1e-6), binomial_reject(0, 100, 0.5, 1e-6)
    (False, True)
    """
    if int(n) == 0:
        return False
    return bool(stats.binomtest(int(k), int(n), float(p), alternative=alternative).pvalue
                < alpha)


def gamma_reject(total: float, shape: int, alpha: float) -> bool:
    """Two-sided test that ``total`` is a sum of ``shape`` i.i.d. Exp(1) variables."""
    return bool(2 * min(stats.gamma.cdf(total, shape), stats.gamma.sf(total, shape)) < alpha)


def dp_violated(low_hits: int, low_runs: int, high_hits: int, high_runs: int, epsilon: float,
                alpha: float) -> bool:
    """Whether an event's frequency on one input (``high_hits`` of ``high_runs``) exceeds
    ``e^ε`` times its frequency on a neighbour (``low_hits`` of ``low_runs``), with
    one-sided Clopper–Pearson bounds at ``1 − α/2`` each: a false alarm of probability at
    most ``α`` for an ε-DP answer, whatever the dependence between the two samples.

    >>> dp_violated(0, 200, 150, 200, 1.0, 1e-7), dp_violated(40, 200, 60, 200, 1.0, 1e-7)
    (True, False)
    """
    upper_low = clopper_pearson(low_hits, low_runs, 1 - alpha)[1]
    lower_high = clopper_pearson(high_hits, high_runs, 1 - alpha)[0]
    return lower_high > math.exp(epsilon * (1 + 1e-9)) * upper_low


def chi2_reject(total: float, df: int, alpha: float) -> bool:
    """Two-sided test that ``total`` is a sum of ``df`` squared i.i.d. N(0, 1) variables."""
    return bool(2 * min(stats.chi2.cdf(total, df), stats.chi2.sf(total, df)) < alpha)



def too_little_noise(groups: Sequence[np.ndarray], sum_cdf: Callable[[float, int], float],
                     cut: float, beyond: float, alpha: float) -> bool:
    """Whether noise sizes are significantly *smaller* than the law a private answer needs.

    ``groups`` holds arrays of sizes ``x >= 0`` (one array per hidden input), each i.i.d.
    under the right law: ``|noise|/b`` (Exp(1)) for Laplace noise of scale ``b``,
    ``(noise/σ)²`` (χ²(1)) for Gaussian noise. Three kinds of one-sided tests, each at
    ``α/(len(groups) + 2)`` (Bonferroni):

    * per group and pooled, the lower tail of ``Σx``, whose law for ``n`` sizes is
      ``sum_cdf(total, n)`` (``scipy.stats.gamma.cdf`` for Exp(1), ``chi2.cdf`` for χ²(1)):
      the noise is smaller overall;
    * pooled, the exact binomial test of the number of sizes ``> cut`` against
      ``beyond``, their probability under the right law: the tails are too light
      (Gaussian noise where Laplace noise is due), though the mean may be right.

    Each test rejects with probability at most its share when every size is stochastically
    at least as large as under the right law, so an answer with *at least* the right noise
    (a private one, however inaccurate) is called too noiseless with probability at most
    ``α``. A judge calls this only after its own tests have failed, to tell a privacy
    violation (less noise than the mechanism's proof needs) from other mistakes.

    >>> sizes = np.random.default_rng(0).exponential(1.0, (4, 500))
    >>> too_little_noise(list(sizes), stats.gamma.cdf, 4.0, math.exp(-4), 1e-6)
    False
    >>> too_little_noise(list(0.8 * sizes), stats.gamma.cdf, 4.0, math.exp(-4), 1e-6)
    True
    """
    share = alpha / (len(groups) + 2)
    pooled = np.concatenate([np.ravel(g) for g in groups])
    if any(sum_cdf(float(np.sum(g)), np.size(g)) < share for g in [*groups, pooled]):
        return True
    return binomial_reject(int(np.sum(pooled > cut)), pooled.size, beyond, share,
                           alternative="less")


#: Where an extreme hidden input is named (:func:`on_extreme`): its kind, never its value.
EXTREME_WHERE = "on an extreme hidden input (far outside the public test's ranges)"


def on_extreme(error: Raised, domain: str) -> Rejection:
    """The plain :class:`Rejection` a judge raises for ``error`` (the student's function
    raised, or returned a result of the wrong form) on an **extreme** hidden input: one of
    the out-of-range cases a judge adds to catch an answer that is exact (or leaky) only
    where the public check never looks. A defensive guard (``if epsilon > 10: raise``) is
    honest there, so unlike a failure on an ordinary input (a :class:`Raised`: no point
    for the exercise, as a "tripwire" must fail on ordinary inputs too) it keeps the public
    point; a judge raises it only after its privacy tests on the ordinary inputs have
    passed, and an answer that is not private on extreme inputs instead of raising is
    still a violation. ``domain`` says what the exercise allows."""
    return Rejection(f"{error}; the exercise allows {domain}")


def rounding_errors(results: np.ndarray, ulps: int = 4) -> np.ndarray:
    """How far each result may be from the exact one (the quotient ``S/C`` of
    :func:`~dpkit.course.judges.average.judge_auto_avg`, a release ``value + noise``),
    judged from how the results are written: ``ulps`` units of their last binary digit
    (float64 arithmetic, a float32 or float16 result), of their last decimal
    (``round(x, 6)``) or of their last significant digit (``float(f"{x:.8g}")``),
    whichever is largest over the batch.

    Under each way of rounding, every result needs at most its digits, so the largest
    number of digits used in the batch bounds the rounding; a float64 quotient uses all 53
    bits and about 17 digits, which gives a few units of its last place.

    >>> errors = rounding_errors(np.array([12.345678, 40.5]))   # 6 decimals at most
    >>> bool(4e-6 <= errors[0] < 5e-6)
    True
    """
    values = np.asarray(results, dtype=np.float64)
    mantissas, _ = np.frexp(np.abs(values))
    units = [int(m) for m in np.ldexp(mantissas, 53).tolist()]
    bits = max((53 - ((u & -u).bit_length() - 1) for u in units if u), default=1)
    decimals, digits = -10**9, 1
    for value in values.tolist():
        written = Decimal(repr(value))
        decimals = max(decimals, -written.as_tuple().exponent)
        digits = max(digits, len(written.normalize().as_tuple().digits))
    leading = np.floor(np.log10(np.where(values == 0, 1.0, np.abs(values))))
    binary = np.abs(values) * 2.0 ** (1 - bits)
    decimal = np.full(values.shape, 10.0 ** -min(decimals, 300))
    significant = 10.0 ** (leading - digits + 1)
    return ulps * np.maximum(binary, np.maximum(decimal, significant))
