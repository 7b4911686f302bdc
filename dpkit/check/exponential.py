"""Exercise checkers for the chapter on the base-2 exponential mechanism.

Every checker returns a :class:`~dpkit.check.Verdict` whose message says what is wrong
with a failing answer without stating the expected one; statistical checks use fixed seeds,
so a student and a teacher grading the same answer get the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats

from dpkit._checks import check_epsilon, check_integer, check_sensitivity
from dpkit.check._common import call_checked, coerce, raised_in_dpkit, shown
from dpkit.check._verdict import Verdict
from dpkit.exponential import Eta, compute_precision
from dpkit.i18n import tr
from dpkit.rng import RandomSource, seeded

__all__ = [
    "check_division_free_sampler",
    "check_eta_choice",
    "check_precision",
    "check_underflow_threshold",
]


def _naive_weight(loss: int, epsilon: float) -> float:
    return float(np.exp(-epsilon * np.float64(loss) / 2))


def check_underflow_threshold(answer: Any, epsilon: float = 1.0) -> Verdict:
    """Check ``answer``: the smallest integer loss ``u`` whose naive weight
    ``np.exp(-ε·u/2)``, computed in double precision, is exactly ``0.0``.

    Passes for that integer only (an int, a NumPy integer or a float equal to it). The check
    is exact and deterministic. A failing verdict says on which side of the threshold the
    answer lies, and shows the weights at the answer and just below it.

    Parameters
    ----------
    answer : int
        The student's loss.
    epsilon : float
        The ε of the exercise (default 1).

    Returns
    -------
    Verdict
    """
    epsilon = check_epsilon(epsilon)
    whole, why = coerce(answer, whole=True)
    if why is not None:
        return Verdict(False, tr("Expected an integer loss, got {why}.").format(why=why))
    answer = whole
    weight, before = _naive_weight(answer, epsilon), _naive_weight(answer - 1, epsilon)
    details = (f"exp(-{epsilon:g}·{answer}/2) = {weight!r}",
               f"exp(-{epsilon:g}·{answer - 1}/2) = {before!r}")
    if weight != 0.0:
        return Verdict(False, tr("The weight of loss {loss} is still positive: the threshold "
                                 "is larger.").format(loss=answer), details)
    if before == 0.0:
        return Verdict(False, tr("Loss {loss} already underflows: look for a smaller "
                                 "threshold.").format(loss=answer - 1), details)
    return Verdict(True, tr("Loss {loss} is the first whose weight is exactly 0.0: every "
                            "outcome at or beyond it can never be drawn.").format(loss=answer),
                   details)


def check_eta_choice(answer: Any, epsilon: float, sensitivity: float = 1,
                     *, y: int = 12) -> Verdict:
    """Check ``answer``: the ``Eta(x, y)`` with the smallest integer ``x`` (the largest
    ``η``) for which the base-2 mechanism is ``ε``-DP on a loss of sensitivity ``Δ``.

    The exercise fixes ``y`` and ``z = 1``; privacy is judged by ``Eta.epsilon(Δ) ≤ ε``
    (computed with upward rounding). Passes exactly for that ``x``. The check is exact and
    deterministic. A failing verdict says whether the answer overspends the budget or is
    private but not the smallest ``x`` (and whether it is off by one); never the ``x``.

    Parameters
    ----------
    answer : Eta
        The student's parameter, ``Eta(x, y)``.
    epsilon : float
        The budget.
    sensitivity : float
        The loss's sensitivity.
    y : int
        The binary exponent the exercise fixes (default 12).

    Returns
    -------
    Verdict
    """
    epsilon = check_epsilon(epsilon)
    sensitivity = check_sensitivity(sensitivity)
    y = check_integer(y, "y", minimum=1, maximum=64)
    if not isinstance(answer, Eta):
        return Verdict(False, tr("Expected a dpkit.exponential.Eta such as Eta(x, {y}), got "
                                 "{answer!r}.").format(y=y, answer=answer))
    if answer.y != y or answer.z != 1:
        return Verdict(False, tr("The exercise fixes y = {y} and z = 1: answer with "
                                 "Eta(x, {y}).").format(y=y), (f"{answer!r}",))
    spent = answer.epsilon(sensitivity)
    details = (f"{answer}", tr("guarantee 2·ln(2)·η·Δ = {spent:.6g} for Δ = "
                               "{sensitivity:g}").format(spent=spent, sensitivity=sensitivity),
               tr("budget ε = {epsilon:g}").format(epsilon=epsilon))
    if spent > epsilon:
        if Eta(answer.x + 1, y).epsilon(sensitivity) <= epsilon:
            return Verdict(False, tr("Off by one: this x is one step too small, so η spends "
                                     "just over the budget. Check the direction of your last "
                                     "rounding step."), details)
        return Verdict(False, tr("This η spends more than the budget: the factor 2 of the "
                                 "exponential mechanism and Δ both multiply η."), details)
    if answer.x > 1 and Eta(answer.x - 1, y).epsilon(sensitivity) <= epsilon:
        if answer.x == 2 or Eta(answer.x - 2, y).epsilon(sensitivity) > epsilon:
            return Verdict(False, tr("Off by one: private, but x is one step larger than it "
                                     "needs to be; the next smaller x (a larger η) is private "
                                     "too."), details)
        return Verdict(False, tr("Private, but not the smallest x: it uses {share:.1%} of the "
                                 "budget, and a smaller x (a larger η) is private too.").format(
                                     share=spent / epsilon), details)
    return Verdict(True, tr("x = {x} is the smallest private choice: η uses {share:.2%} of the "
                            "budget.").format(x=answer.x, share=spent / epsilon), details)


def check_precision(answer: Any, utility_min: Any, utility_max: Any, max_outcomes: Any,
                    eta: Eta) -> Verdict:
    """Check ``answer``: the analytic precision, in bits, of the exact base-2 exponential
    mechanism with losses in ``[utility_min, utility_max]``, at most ``max_outcomes``
    outcomes and parameter ``eta`` (the chapter's bound).

    Passes for that integer only (or a float equal to it). The check is exact and
    deterministic.
    A failing verdict says whether the answer has too few bits or more than the bound; never
    the expected number.

    Returns
    -------
    Verdict
    """
    expected = compute_precision(utility_min, utility_max, max_outcomes, eta)
    whole, why = coerce(answer, whole=True)
    if why is not None:
        return Verdict(False, tr("Expected a number of bits (an integer), got {why}.").format(
            why=why))
    answer = whole
    details = (tr("your answer: {answer} bits").format(answer=answer),)
    if answer < expected:
        return Verdict(False, tr("Too few bits: some sum of weights would be rounded. Count "
                                 "the bits a sum of weights needs below the binary point and "
                                 "above it."), details)
    if answer > expected:
        return Verdict(False, tr("Enough, but not the smallest bound that always suffices."),
                       details)
    return Verdict(True, tr("That is the analytic precision: Y·K + bitlen(n)."), details)


#: What :class:`BitsOnly` raises when a sampler asks for another draw than ``bits(k)``,
#: ``{what}`` one of :data:`REFUSED_DRAWS` (fixed texts: a grader may quote them).
BITS_ONLY_REFUSAL = "the sampler called rng.{what}: the exercise allows rng.bits(k) only"
#: The draws :class:`BitsOnly` refuses, as its refusals name them.
REFUSED_DRAWS = ("bytes", "randbelow", "bernoulli", "uniform (a float)", "uint64",
                 "uniforms (floats)", "numpy_generator")


class BitsOnly(RandomSource):
    """Wraps a source and allows ``bits(k)`` only, as the exercise demands.

    Every other draw raises ``RuntimeError`` naming the method. Public (not in ``__all__``:
    it is no checker) so that a grader's source can subclass it rather than copy it.
    """

    #: Whether a lender may serve ``bits(k)`` from blocks drawn ahead (:meth:`block`): true
    #: here, where the bits are one plain stream; a subclass that answers each draw itself
    #: (the judge's scripted enumeration) sets it to False.
    lent_in_blocks = True

    def __init__(self, inner: RandomSource) -> None:
        super().__init__()
        self._inner = inner

    def bits(self, k: int) -> int:
        value = self._inner.bits(k)
        self._record([k])
        return value

    def block(self, n: int, served: list[int]) -> int:
        """``n`` fresh random bits of the wrapped source, for a lender that serves this
        source's ``bits(k)`` calls from them, in order, in another process (the grading
        sandbox, :class:`dpkit.course.worker.RemoteSource`): one request per block instead
        of one per draw.

        Parameters
        ----------
        n : int
            Number of bits (>= 0).
        served : list of int
            The sizes ``k`` of the ``bits(k)`` calls the lender served since its previous
            block, in order; they are recorded as those calls would have been.

        Returns
        -------
        int
            A uniformly random integer in ``[0, 2**n)``.

        Raises
        ------
        TypeError, ValueError
            If ``n`` is not an integer >= 0, or ``served`` not a list of integers >= 0.
        """
        n = check_integer(n, "n", minimum=0)
        if not (isinstance(served, list) and all(type(k) is int and k >= 0 for k in served)):
            raise TypeError("served must be a list of integers >= 0 (the sizes of the draws)")
        self._record(served)
        return self._inner.bits(n)

    def _record(self, sizes: list[Any]) -> None:
        """Note the sizes of ``bits(k)`` calls served (nothing here; see subclasses)."""

    def _refuse(self, what: str) -> Any:
        raise RuntimeError(BITS_ONLY_REFUSAL.format(what=what))

    def bytes(self, n: int) -> bytes:
        return self._refuse("bytes")

    def randbelow(self, n: int) -> int:
        return self._refuse("randbelow")

    def bernoulli(self, p: Any) -> bool:
        return self._refuse("bernoulli")

    def uniform(self) -> float:
        return self._refuse("uniform (a float)")

    def uint64(self, size: Any) -> np.ndarray:
        return self._refuse("uint64")

    def uniforms(self, size: Any) -> np.ndarray:
        return self._refuse("uniforms (floats)")

    def numpy_generator(self) -> np.random.Generator:
        return self._refuse("numpy_generator")


def float_hint(error: Exception) -> str:
    """What an arithmetic error of a sampler on integer weights most likely means (nothing
    for an error raised inside ``rng.bits``: its message says what is wrong)."""
    if not isinstance(error, (OverflowError, ValueError, ZeroDivisionError)) \
            or raised_in_dpkit(error):
        return ""
    return tr("does it convert the weights to floating point somewhere? A float holds about "
              "16 digits and nothing beyond 1.8e308; the exact sampler compares integers only.")


class _RecordingBits(BitsOnly):
    """:class:`BitsOnly` that also records the sizes ``k`` the sampler asks ``bits`` for."""

    def __init__(self, inner: RandomSource) -> None:
        super().__init__(inner)
        self.sizes: set[Any] = set()

    def _record(self, sizes: list[Any]) -> None:
        self.sizes.update(sizes)


def _modulo_frequencies(weights: list[int], k: int) -> np.ndarray:
    """The outcome probabilities of a sampler that takes ``rng.bits(k) % Σ w`` as its point
    below the total: the ``2**k mod Σ w`` smallest points come up once more than the rest."""
    total = sum(weights)
    once, more = divmod(1 << k, total)
    probabilities, start = [], 0
    for w in weights:
        extra = max(0, min(start + w, more) - start)   # points of [start, start + w) below more
        probabilities.append(Fraction(once * w + extra, 1 << k))
        start += w
    return np.array(probabilities, dtype=float)


def _modulo_hint(weights: list[int], counts: np.ndarray, sizes: set[Any]) -> str:
    """A hint when the frequencies match ``bits(k) % Σ w`` for a ``k`` the sampler used."""
    draws = int(counts.sum())
    for k in sorted(size for size in sizes if isinstance(size, int) and 0 < size <= 4096)[:8]:
        expected = _modulo_frequencies(weights, k) * draws
        if (expected > 0).all() and stats.chisquare(counts, expected).pvalue > 1e-3:
            return tr("They match rng.bits({k}) reduced modulo Σ w: 2**{k} is not a multiple "
                      "of Σ w, so the smallest remainders come up more often than the others. "
                      "Reducing modulo the total is biased; when the bits fall at or above "
                      "the total, reject them and draw again.").format(k=k)
    return ""


def check_division_free_sampler(sampler: Callable[[list[int], RandomSource], int], *,
                                draws: int = 6000, seed: int = 2020) -> Verdict:
    """Check ``sampler(weights, rng) -> index``: draws ``i`` with probability ``w_i / Σ w``.

    The sampler receives positive integer weights and a source that allows ``rng.bits(k)``
    only (every other draw — ``randbelow``, ``bernoulli``, float uniforms — raises), as the
    exercise asks. It must return an ``int`` index. Its output frequencies are compared with
    the exact distribution by chi-square tests on two sets of weights: small ones, and
    weights near ``10**400``, beyond the float range, on which any floating-point step
    (``bits / 2**53 * total``, ``total / ...``) raises ``OverflowError`` or loses the
    outcomes' proportions. Each test fails below p = 5e-7, so a correct sampler fails with
    probability at most 1e-6 (and, with the fixed seed, always passes or always fails). When
    the frequencies fail but match those of ``rng.bits(k) % Σ w`` for a ``k`` the sampler
    asked for (chi-square p > 1e-3), the verdict says that reducing modulo the total is
    biased.

    Parameters
    ----------
    sampler : callable
    draws : int
        Number of draws (default 6000).
    seed : int
        Seed of the source.

    Returns
    -------
    Verdict
    """
    draws = check_integer(draws, "draws", minimum=100)
    huge = 10**400 + 1
    details: list[str] = []
    for weights, what in (([1, 6, 3, 20, 1, 9], tr("small weights")),
                          ([huge, 3 * huge, 2 * huge], tr("weights near 10**400"))):
        rng = _RecordingBits(seeded(seed))
        counts = np.zeros(len(weights), dtype=int)
        for _ in range(draws):
            index = call_checked(sampler, list(weights), rng,
                                 where=tr("On {what}").format(what=what),
                                 details=details, explain=float_hint)
            if isinstance(index, Verdict):
                return index
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) \
                    or not 0 <= index < len(weights):
                return Verdict(False, tr("On {what}, the sampler must return an int index in "
                                         "[0, {outcomes}), got {value}.").format(
                                             what=what, outcomes=len(weights),
                                             value=shown(index)), tuple(details))
            counts[int(index)] += 1
        expected = np.array([Fraction(w, sum(weights)) for w in weights], dtype=float) * draws
        pvalue = float(stats.chisquare(counts, expected).pvalue)
        details += [tr("{what}: observed {observed}, expected {expected}, chi-square p-value "
                       "{pvalue:.3g}").format(what=what, observed=counts.tolist(),
                                              expected=np.round(expected, 1).tolist(),
                                              pvalue=pvalue)]
        if pvalue < 5e-7:
            hint = _modulo_hint(weights, counts, rng.sizes)
            said = (tr("On {what}, the frequencies do not match w_i / Σ w. {hint}") if hint
                    else tr("On {what}, the frequencies do not match w_i / Σ w."))
            return Verdict(False, said.format(what=what, hint=hint), tuple(details))
    return Verdict(True, tr("The sampler draws each index with probability w_i / Σ w, "
                            "using random bits and integer arithmetic only."), tuple(details))

