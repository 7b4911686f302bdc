"""Hidden tests ("judges") for the exercises whose answer is a randomized function.

A public check (:mod:`dpkit.check`) runs on fixed inputs a student can see; a judge is the
hidden test behind the grade. It judges the answer by the *law* of its outputs and by its
privacy on inputs drawn from a secret generator, never by equality with the model
solution's output on a seed, so every correct variant passes and a lookup table of the
public inputs earns nothing.

Each judge has the form ``judge_<name>(fn, rng) -> Judgement``:

* ``fn`` is the student's function, treated as an opaque callable (in production a proxy
  that runs the student's code in a sandboxed process): every call may be slow and may
  raise anything, and only what it returns, or raises, is observed, never a side effect
  on its arguments, but for the draws it makes from a random source (the sandbox lends
  sources, so their draws run in the grader: the sampler's judge replays them). Each call
  gets a fresh random source seeded from ``rng``.
* ``rng`` is a :class:`numpy.random.Generator` the grader seeds from a secret per-course
  value; it draws the hidden inputs and the seeds, so a judge is deterministic given it.
* The :class:`Judgement` says whether the answer passed and, for the student, what was
  found wrong: never an expected value, a hidden input or the model solution; and whether
  a failure is a privacy violation (``privacy``: the answer is shown not to be private),
  for which grading gives the whole exercise 0. A judge raises
  :class:`~dpkit.course.judges._base.PrivacyViolation` for those, and a plain
  ``Rejection`` for failures of accuracy or form; each judge's docstring says which is
  which.

Every judge states, in its docstring, its hidden inputs, its tests and their
false-failure probability for a correct answer (at most 1e-6, by Bonferroni over its
tests, with rigorous finite-sample bounds), the number of calls it makes, and what it
cannot judge from outputs.

=================================  ============================  ======  ==========
judge                              exercise                      calls   chapter
=================================  ============================  ======  ==========
:func:`judge_laplace_mechanism`    ``ex-laplace-textbook``       12,796  laplace
:func:`judge_gaussian_noise`       ``ex-analytic-variance``          29  analytic_gaussian
:func:`judge_above_threshold`      ``ex-svt-above-threshold``    12,043  sparse_vector
:func:`judge_auto_avg`             ``ex-svt-auto-avg``            2,975  sparse_vector
:func:`judge_division_free_sampler` ``ex-exp-sampler``           15,908  exponential_base2
=================================  ============================  ======  ==========
"""

from dpkit.course.judges._base import Judgement
from dpkit.course.judges.average import AUTO_AVG_CALLS, judge_auto_avg
from dpkit.course.judges.gaussian import GAUSSIAN_CALLS, judge_gaussian_noise
from dpkit.course.judges.noise import LAPLACE_CALLS, judge_laplace_mechanism
from dpkit.course.judges.sampler import SAMPLER_CALLS, judge_division_free_sampler
from dpkit.course.judges.svt import ABOVE_THRESHOLD_CALLS, judge_above_threshold

__all__ = [
    "ABOVE_THRESHOLD_CALLS",
    "AUTO_AVG_CALLS",
    "GAUSSIAN_CALLS",
    "JUDGES",
    "LAPLACE_CALLS",
    "SAMPLER_CALLS",
    "Judgement",
    "judge_above_threshold",
    "judge_auto_avg",
    "judge_division_free_sampler",
    "judge_gaussian_noise",
    "judge_laplace_mechanism",
]

#: The judge of each randomized exercise, by the exercise's label in the book.
JUDGES = {
    "ex-laplace-textbook": judge_laplace_mechanism,
    "ex-analytic-variance": judge_gaussian_noise,
    "ex-svt-above-threshold": judge_above_threshold,
    "ex-svt-auto-avg": judge_auto_avg,
    "ex-exp-sampler": judge_division_free_sampler,
}
