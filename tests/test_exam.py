"""The exam bank (course/exams/) and ``make exam`` (scripts/exam.py).

Every question parses with all its fields, its rubric adds up to its points and it refers only
to what its chapter or an earlier one defines; every number of a model answer is recomputed
here (``NUMBERS``) and must be printed in the answer as computed; no sentence of the bank
reaches a student (the book's sources, the student notebooks, the assignments); and the
script assembles an exam and a key for two chapters, and refuses an unknown chapter.
"""

import importlib.util
import math
import re
import sys
from fractions import Fraction
from pathlib import Path

import nbformat
import pytest
from scipy.stats import norm

from dpkit.composition import advanced, pure_to_zcdp, sequential, zcdp_to_dp
from dpkit.course.myst import read_book
from dpkit.exponential import Eta, compute_precision
from dpkit.gaussian import analytic_sigma, classic_sigma, delta_for_sigma
from dpkit.laplace import laplace_accuracy, laplace_scale
from dpkit.plots.gaussian import classic_crossing_epsilon

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("exam", ROOT / "scripts" / "exam.py")
exam = importlib.util.module_from_spec(_spec)
sys.modules["exam"] = exam          # dataclasses look their module up
_spec.loader.exec_module(exam)

REQUIRED = ("intro", "promise", "laplace", "gaussian", "analytic_gaussian", "composition",
            "exponential_base2", "sparse_vector")        # every chapter of the book's first part
QUESTIONS = {chapter: exam.parse_bank(exam.BANK / f"{chapter}.md")
             for chapter in exam.bank_chapters()}
BY_ID = {q.id: q for qs in QUESTIONS.values() for q in qs}


def test_every_question_parses_with_its_fields_and_points():
    assert set(REQUIRED) <= set(QUESTIONS), sorted(QUESTIONS)
    for chapter in REQUIRED:
        assert len(QUESTIONS[chapter]) >= 8, chapter
    ids = [q.id for qs in QUESTIONS.values() for q in qs]
    assert len(ids) == len(set(ids)), "an id is used in two chapters"
    for chapter, questions in QUESTIONS.items():
        assert {q.type for q in questions} == set(exam.TYPES), chapter  # every type, each chapter
        for q in questions:
            assert q.id.startswith(f"{chapter.replace('_', '-')}-"), q.id  # ids: [a-z0-9-]
            assert q.title and q.question and q.answer and q.rubric, q.id
            assert q.points >= 1 and sum(q.rubric_points()) == q.points, (q.id, q.rubric_points())
            if q.type == "true-false":
                assert re.match(r"(True|False)\b", q.answer), q.id


SECTIONS = "### Question\nx\n### Model answer\ny\n### Rubric\n- 2 points: z\n"


@pytest.mark.parametrize("broken, message", [
    ("## q-1: T\ntype: essay\npoints: 2\n" + SECTIONS, "type must be one of"),
    ("## q-1: T\ntype: proof\npoints: two\n" + SECTIONS, "points must be a positive integer"),
    ("## q-1: T\ntype: proof\npoints: 2\n### Question\nx\n### Rubric\n- 2 points: z\n",
     "sections must be Question, Model answer, Rubric"),
    ("## q 1\ntype: proof\n", "a question heading must read"),
])
def test_a_malformed_question_is_refused_by_name(tmp_path, broken, message):
    path = tmp_path / "ch.md"
    path.write_text("# Bank\n\n" + broken)
    with pytest.raises(ValueError, match=message):
        exam.parse_bank(path)


def test_questions_use_only_what_their_chapter_or_an_earlier_one_defines():
    order = exam.book_chapters()
    defined = {label: order.index(stem)
               for label, (_, stem) in read_book(ROOT / "book").titles.items()}
    for chapter, questions in QUESTIONS.items():
        for q in questions:
            for text in (q.question, q.answer, q.rubric):
                for match in exam._ROLE.finditer(text):
                    label = match.group("label")
                    assert defined.get(label, len(order)) <= order.index(chapter), (q.id, label)


# (question id, the number as printed in its question or model answer, the value recomputed).
# The question (a value it gives) or the model answer states each of these numbers; a change to
# either side fails the test.
ln = math.log
NUMBERS = [
    ("laplace-pair-negative-bounds", "21", max(abs(-20), abs(10)) + 1),
    ("laplace-pair-negative-bounds", "30", laplace_scale(21, 0.7)),
    ("laplace-histogram-interval", "5.77", laplace_accuracy(1, 1.0, beta=0.05 / 16)),
    ("laplace-histogram-interval", "5.77", 5 * ln(2) + ln(10)),
    ("laplace-histogram-interval", "3.00", laplace_accuracy(1, 1.0, beta=0.05)),
    # the identity behind it, ln 20 = ln 2 + ln 10 (not 2 ln 2 + ln 10 = ln 40), and the hint's sums
    ("laplace-histogram-interval", "3.00", ln(2) + ln(10)),
    ("laplace-histogram-interval", "3.00", 0.693 + 2.303),
    ("laplace-histogram-interval", "3.465", 5 * 0.693),
    ("laplace-histogram-interval", "5.77", 5 * 0.693 + 2.303),
    ("laplace-histogram-interval", "1.9", ln(320) / ln(20)),
    ("laplace-max-age", "73", 90 - 17),
    ("laplace-discrete-half", "\\tfrac13", (1 - Fraction(1, 2)) / (1 + Fraction(1, 2))),
    # Pr[|Z| >= 2] = 2 * (1/3) * sum_{z >= 2} 2^-z, the geometric series (1/4) / (1 - 1/2)
    ("laplace-discrete-half", "\\tfrac13", 2 * Fraction(1, 3) * Fraction(1, 4) / Fraction(1, 2)),
    ("laplace-discrete-half", "0.693", ln(2)),
    ("laplace-timing-leak", "107", 103 + (5 - 1)),
    ("laplace-timing-leak", "99", 103 - (5 - 1)),
    ("gaussian-mixed-query", "3.61", math.sqrt(13)),
    ("gaussian-classic-one-count", "11.736", ln(1.25e5)),
    ("gaussian-classic-one-count", "11.515", 5 * 2.303),         # with the hint ln 10 ~ 2.303
    ("gaussian-classic-one-count", "11.738", 0.223 + 5 * 2.303),
    ("gaussian-classic-one-count", "23.47", 2 * ln(1.25e5)),
    ("gaussian-classic-one-count", "9.69", math.sqrt(2 * ln(1.25e5)) / 0.5),
    ("gaussian-classic-one-count", "2.83", math.sqrt(2) * laplace_scale(1, 0.5)),
    ("gaussian-classic-one-count", "3.4", math.sqrt(2 * ln(1.25e5)) / 0.5
     / (math.sqrt(2) * 2)),
    ("gaussian-crossover-1e-6", "14.04", ln(1.25e6)),
    ("gaussian-crossover-1e-6", "14.039", ln(1.25e6)),
    ("gaussian-crossover-1e-6", "13.818", 6 * 2.303),
    ("gaussian-crossover-1e-6", "14.04", 0.223 + 6 * 2.303),
    ("gaussian-crossover-1e-6", "15", next(d for d in range(1, 100) if d > ln(1.25e6))),
    ("gaussian-crossover-1e-6", "19.80", math.sqrt(2) * 14),
    ("gaussian-crossover-1e-6", "19.83", math.sqrt(14) * math.sqrt(2 * ln(1.25e6))),
    ("gaussian-loss-sigma-2", "0.0401", norm.cdf(-1.75)),
    ("gaussian-loss-sigma-2", "-1.75", (-3.5 - 0) / 2),
    ("gaussian-loss-sigma-2", "0.040059", norm.cdf(-1.75)),
    # the exact delta(1) of sigma/Delta = 2: Phi(-eps sigma/Delta + Delta/2sigma) - e^eps Phi(...)
    ("gaussian-loss-sigma-2", "0.0068", norm.cdf(-1.75) - math.e * norm.cdf(-2.25)),
    ("gaussian-bad-code", "3.5", math.sqrt(12)),
    ("gaussian-bad-code", "5.299", math.sqrt(2 * ln(1.25e6))),
    ("gaussian-bad-code", "31.79", math.sqrt(2 * ln(1.25e6)) * 12 / 2),
    # the theorem with Delta_2 = sqrt(12) at that sigma: eps' = c sqrt(12) / sigma = 1/sqrt(3)
    ("gaussian-bad-code", "0.58", math.sqrt(2 * ln(1.25e6)) * math.sqrt(12)
     / (math.sqrt(2 * ln(1.25e6)) * 12 / 2)),
    ("gaussian-histogram-tf", "4.84", math.sqrt(2 * ln(1.25e5))),
    ("composition-advanced-400", "0.8", math.sqrt(2 * 400 * 8) * 0.01),
    ("composition-advanced-400", "0.0402", 400 * 0.01 * math.expm1(0.01)),
    ("composition-advanced-400", "0.840", advanced(0.01, 0, 400, math.exp(-8))[0]),
    ("composition-advanced-400", "4", sequential([0.01] * 400)[0]),
    ("composition-crossover-1-5", "41", next(k for k in range(1, 1000)
                                             if math.sqrt(2 * 5 / k) < 2 - 1.5)),
    ("composition-rr-profile", "\\tfrac12", Fraction(3, 4) * (1 - Fraction(1, 3))),
    ("composition-zcdp-eight", "7", zcdp_to_dp(8 * 1 / (2 * 2**2), math.exp(-9))),
    ("composition-zcdp-eight", "2.246", zcdp_to_dp(1 / 8, math.exp(-9))),
    ("composition-zcdp-eight", "17.97", 8 * zcdp_to_dp(1 / 8, math.exp(-9))),
    ("composition-accountant-code", "0.141", 2 * math.sqrt(2 / 400)),
    ("composition-accountant-code", "0.08", (2 * math.sqrt(2 / 400)) ** 2 / 0.5**2),
    ("composition-accountant-code", "200", 400 * 0.5),
    # sparse_vector: k = 20, beta = 0.1, epsilon = 0.5 in Theorem 3.24
    ("sparse-vector-alpha-by-hand", "95.9", 8 * (ln(20) + ln(2 / 0.1)) / 0.5),
    ("sparse-vector-alpha-by-hand", "95.86", 8 * (ln(20) + ln(2 / 0.1)) / 0.5),
    ("sparse-vector-alpha-by-hand", "95.87", 32 * (0.693 + 2.303)),
    ("sparse-vector-alpha-by-hand", "2.996", 0.693 + 2.303),
    # P[|tau| >= alpha/2] = e^(-eps alpha/4), printed in units of 1e-6
    ("sparse-vector-alpha-by-hand", "6.25",
     math.exp(-0.5 * (8 * (ln(20) + ln(2 / 0.1)) / 0.5) / 4) * 1e6),
    ("sparse-vector-alpha-by-hand", "36.8", 8 * (ln(200) + ln(20)) / 0.5 - 32 * ln(20)),
    ("sparse-vector-alpha-by-hand", "132.7", 8 * (ln(200) + ln(2 / 0.1)) / 0.5),
    ("sparse-vector-noise-per-comparison", "120", laplace_scale(1, 0.5 / 60)),
    ("sparse-vector-noise-per-comparison", "169.7", math.sqrt(2) * 60 / 0.5),
    ("sparse-vector-noise-per-comparison", "160", 2 * (4 / 0.5) ** 2 + 2 * (2 / 0.5) ** 2),
    ("sparse-vector-noise-per-comparison", "12.65", math.sqrt(2 * 8**2 + 2 * 4**2)),
    ("sparse-vector-noise-per-comparison", "13.4", math.sqrt(2) * 120 / math.sqrt(160)),
    ("sparse-vector-zcdp-budget", "5", sequential([0.05] * 100)[0]),
    ("sparse-vector-zcdp-budget", "0.2564", 100 * 0.05 * math.expm1(0.05)),
    ("sparse-vector-zcdp-budget", "0.0513", math.expm1(0.05)),
    ("sparse-vector-zcdp-budget", "2.256", advanced(0.05, 0, 100, math.exp(-8))[0]),
    ("sparse-vector-zcdp-budget", "0.125", 100 * pure_to_zcdp(0.05)),
    ("sparse-vector-zcdp-budget", "2.125", zcdp_to_dp(100 * pure_to_zcdp(0.05), math.exp(-8))),
    ("sparse-vector-zcdp-budget", "40", 2 / (5 / 100)),
    ("sparse-vector-zcdp-budget", "80", 4 / (5 / 100)),
    ("sparse-vector-ranges-crossover", "14.14", math.sqrt(2 * 100)),
    ("sparse-vector-ranges-crossover", "11.31", 2 * math.sqrt(2) * 4),
    ("sparse-vector-ranges-crossover", "4", max(c for c in range(1, 50)
                                             if 2 * math.sqrt(2) * c < math.sqrt(200))),
    ("sparse-vector-ranges-crossover", "37", min(w for w in range(1, 200)
                                              if 2 * math.sqrt(2) * 3 < math.sqrt(2 * w))),
    ("sparse-vector-grid-rounding", "1.2", 4 * 0.3),
    ("sparse-vector-release-answer", "2", (9 - 1) / 4),
    # one threshold Lap(2c/eps) and queries Lap(2c/eps): eps/(2c) + c * 2/(2c/eps), at c = 5
    ("sparse-vector-shared-threshold", "1.1", 1 / (2 * 5) + 5 * 2 / (2 * 5)),
    ("sparse-vector-shared-threshold", "11.1", 4 * 5**2 / (2 * 5 - 1)),
    ("sparse-vector-auto-avg-budget", "400", 80 / (0.6 / 3)),
    ("sparse-vector-auto-avg-budget", "5", 1 / (0.6 / 3)),
    ("sparse-vector-auto-avg-budget", "-100", -20 / (0.6 / 3)),
    ("sparse-vector-auto-avg-budget", "0.031", 100 * (90 - 80) / 32_561),
    ("sparse-vector-auto-avg-budget", "0.017", math.sqrt(2) * 400 / 32_561),
    # exponential_base2: 100 outcomes, Delta = 1, eps = 0.1, t = ln 20 (e^-t = 0.05)
    ("exponential-base2-utility-bound", "152.0", 2 / 0.1 * (ln(100) + ln(20))),
    ("exponential-base2-utility-bound", "152.04", 20 * (0.693 + 3 * 2.303)),
    ("exponential-base2-utility-bound", "7.602", 0.693 + 3 * 2.303),
    ("exponential-base2-utility-bound", "6.909", 3 * 2.303),
    ("exponential-base2-utility-bound", "92.1", 2 / 0.1 * (ln(1e4) - ln(100))),
    ("exponential-base2-utility-bound", "244.1", 2 / 0.1 * (ln(1e4) + ln(20))),
    ("exponential-base2-eta-conversion", "0.415", Eta(3, 2).eta),
    ("exponential-base2-eta-conversion", "0.414", (2 * 0.693 - 1.099) / 0.693),
    ("exponential-base2-eta-conversion", "0.575", Eta(3, 2).epsilon(1)),
    ("exponential-base2-eta-conversion", "0.574", 2 * (2 * 0.693 - 1.099)),
    ("exponential-base2-eta-conversion", "1.151", Eta(3, 2).epsilon(2)),
    ("exponential-base2-eta-conversion", "1.148", 4 * (2 * 0.693 - 1.099)),
    ("exponential-base2-eta-conversion", "0.288", Eta(3, 2).eta * ln(2)),
    ("exponential-base2-eta-conversion", "0.287", 2 * 0.693 - 1.099),
    ("exponential-base2-precision", "26", math.ceil(20) - math.floor(-5.5)),
    ("exponential-base2-precision", "6", (50).bit_length()),
    ("exponential-base2-precision", "84", compute_precision(-5.5, 20, 50, Eta(6, 4))),
    ("exponential-base2-precision", "84", 3 * 26 + 6),
    # weights without the 2: P[o1 | D] / P[o1 | D'], u(D) = (0, 1, ..., 1), u(D') = (1, 0, ..., 0)
    ("exponential-base2-factor-two", "7.22", (1 / (1 + 100 * math.exp(-1)))
     / (math.exp(-1) / (math.exp(-1) + 100))),
    ("exponential-base2-factor-two", "1.98", ln((1 / (1 + 100 * math.exp(-1)))
                                                / (math.exp(-1) / (math.exp(-1) + 100)))),
    ("exponential-base2-factor-two", "100.368", 0.368 + 100),
    ("exponential-base2-factor-two", "36.8", 100 * 0.368),
    ("exponential-base2-sensitivity-slip", "4.5", 0.5 * 3**2),
    # g = 2b: the better one loses with probability (1/2) e^-2 (1 + 1) = e^-2
    ("exponential-base2-laplace-noisy-max", "0.135", 0.5 * math.exp(-2) * (1 + 2 / 2)),
    ("exponential-base2-laplace-noisy-max", "0.865", 1 - 0.5 * math.exp(-2) * (1 + 2 / 2)),
    ("exponential-base2-laplace-noisy-max", "0.865", 1 - 0.135),
    ("exponential-base2-laplace-noisy-max", "0.881", 1 / (1 + math.exp(-2))),
    ("exponential-base2-laplace-noisy-max", "0.881", 1 / (1 + 0.135)),
    ("exponential-base2-no-underflow", "38", 1.0 * 76 / 2),
    ("exponential-base2-no-underflow", "3.14", math.exp(-38) / (1 + 499 * math.exp(-38)) * 1e17),
    ("exponential-base2-no-underflow", "8.5", math.exp(-37) / (1 + 499 * math.exp(-37)) * 1e17),
    ("exponential-base2-no-underflow", "5.55", 2.0**-54 * 1e17),
    # analytic_gaussian
    ("analytic-gaussian-profile-by-hand", "0.2384", delta_for_sigma(1.0, 1.0, 0.5)),
    ("analytic-gaussian-profile-by-hand", "0.2384", 0.5 - 1.6487 * 0.1587),
    ("analytic-gaussian-profile-by-hand", "0.2616", 1.6487 * 0.1587),
    ("analytic-gaussian-profile-by-hand", "0.1587", norm.cdf(-1)),
    # (a), and (b) = (a) without the factor e^eps, at chi = 1, eps = 2 (r = 1/sqrt 3)
    ("analytic-gaussian-derivative-check", "-0.1555", math.exp(-1) * (1 / math.sqrt(3) - 1)),
    ("analytic-gaussian-derivative-check", "-0.1555", 0.3679 * (0.5774 - 1)),
    ("analytic-gaussian-derivative-check", "-0.3391", math.exp(-1) * (math.exp(-2) / math.sqrt(3)
                                                                      - 1)),
    ("analytic-gaussian-derivative-check", "-0.3392", 0.3679 * (0.1353 * 0.5774 - 1)),
    ("analytic-gaussian-derivative-check", "0.0781", 0.1353 * 0.5774),
    ("analytic-gaussian-derivative-check", "2.18", (math.exp(-2) / math.sqrt(3) - 1)
     / (1 / math.sqrt(3) - 1)),
    ("analytic-gaussian-variance-bug", "0.004", 20 / 5000),
    ("analytic-gaussian-variance-bug", "0.014923", analytic_sigma(0.004, 1.0, 1e-5)),
    ("analytic-gaussian-variance-bug", "2.227", analytic_sigma(0.004, 1.0, 1e-5) ** 2 * 1e4),
    ("analytic-gaussian-variance-bug", "67", 1 / analytic_sigma(0.004, 1.0, 1e-5)),
    ("analytic-gaussian-variance-bug", "4.454", 2 * analytic_sigma(0.004, 1.0, 1e-5) ** 2 * 1e4),
    ("analytic-gaussian-variance-bug", "8.98", 0.004 / (2 * analytic_sigma(0.004, 1.0, 1e-5) ** 2)),
    ("analytic-gaussian-variance-bug", "0.056", analytic_sigma(0.004, 1.0, 1e-5) ** 2 / 0.004),
    ("analytic-gaussian-erf-bisection", "1.13", norm.cdf(-9) * 1e19),
    ("analytic-gaussian-erf-bisection", "8.838", analytic_sigma(1.0, 1.0, 1e-20)),
    ("analytic-gaussian-classic-at-10", "0.4553", analytic_sigma(1.0, 10.0, 1e-4)),
    ("analytic-gaussian-classic-at-10", "9.435", 0.223 + 4 * 2.303),
    ("analytic-gaussian-classic-at-10", "18.870", 2 * (0.223 + 4 * 2.303)),
    ("analytic-gaussian-classic-at-10", "4.344", math.sqrt(18.870)),
    ("analytic-gaussian-classic-at-10", "0.4344", math.sqrt(18.870) / 10),
    ("analytic-gaussian-classic-at-10", "0.4344", math.sqrt(2 * ln(1.25e4)) / 10),
    ("analytic-gaussian-classic-at-10", "2.7", delta_for_sigma(math.sqrt(2 * ln(1.25e4)) / 10,
                                                               1.0, 10.0) * 1e4),
    ("analytic-gaussian-classic-at-10", "7.99", classic_crossing_epsilon(1e-4)),
    ("analytic-gaussian-classic-waste", "7.032", analytic_sigma(1.0, 0.5, 1e-5)),
    ("analytic-gaussian-classic-waste", "4.845", math.sqrt(2 * ln(1.25e5))),
    ("analytic-gaussian-classic-waste", "9.69", classic_sigma(1.0, 0.5, 1e-5)),
    ("analytic-gaussian-classic-waste", "1.38", classic_sigma(1.0, 0.5, 1e-5)
     / analytic_sigma(1.0, 0.5, 1e-5)),
    ("analytic-gaussian-classic-waste", "1.90", (classic_sigma(1.0, 0.5, 1e-5)
                                                 / analytic_sigma(1.0, 0.5, 1e-5)) ** 2),
    ("analytic-gaussian-classic-waste", "1.58", classic_sigma(1.0, 0.1, 1e-5)
     / analytic_sigma(1.0, 0.1, 1e-5)),
    # promise
    # a factor 3 for a family of three: eps = ln 3 / 3, e^eps = 3^(1/3), delta = 1e-7
    ("promise-group-of-three", "0.3662", ln(3) / 3),
    ("promise-group-of-three", "1.4422", 3 ** (1 / 3)),
    ("promise-group-of-three", "2.0801", 3 ** (2 / 3)),
    ("promise-group-of-three", "4.52", sum(math.exp(ln(3) / 3 * i) for i in range(3))),
    ("promise-group-of-three", "4.52", 1 + 1.4422 + 2.0801),
    ("promise-group-of-three", "6.24", 3 * math.exp(2 * ln(3) / 3)),
    ("promise-test-error-rates", "0.317", 0.95 / 3),
    ("promise-test-error-rates", "0.85", 1 - 3 * 0.05),
    ("promise-test-error-rates", "0.75", 3 / (1 + 3)),
    ("promise-test-error-rates", "0.84", 1 - 0.01 - 3 * 0.05),
    ("promise-test-error-rates", "0.7525", (3 + 0.01) / (1 + 3)),
    ("promise-test-error-rates", "0.313", (1 - 0.01 - 0.05) / 3),
    ("promise-audit-by-hand", "0.847", ln(0.70 / 0.30)),
    ("promise-audit-by-hand", "0.847", 1.946 - 1.099),
    ("promise-audit-by-hand", "0.833", ln((0.70 - 0.01) / 0.30)),
    ("promise-audit-many-events", "0.5", 10 * 0.05),
    ("promise-one-sided-survey", "0.731", math.e / (1 + math.e)),
    ("promise-one-sided-survey", "0.693", ln(0.8 / 0.4)),
    ("promise-one-sided-survey", "1.099", ln(max(0.8 / 0.4, 0.6 / 0.2, 0.4 / 0.8, 0.2 / 0.6))),
    ("promise-one-sided-survey", "2.718", math.e),
    ("promise-delta-size", "3.07", 1e5 / 32561),
    ("promise-delta-size", "32.6", 1e-3 * 32561),
    # intro
    ("intro-debias-survey", "0.3", (0.4 - (1 - 3 / 4)) / (2 * 3 / 4 - 1)),
    ("intro-debias-survey", "0.0155", math.sqrt(0.4 * 0.6 / 1000)),
    ("intro-debias-survey", "0.031", math.sqrt(0.4 * 0.6 / 1000) / (2 * 3 / 4 - 1)),
    ("intro-what-epsilon-allows", "0.0165", 0.01 * math.exp(0.5)),
    ("intro-what-epsilon-allows", "64.9", 100 * math.expm1(0.5)),
    ("intro-what-epsilon-allows", "0.182", ln(1.2)),
    ("intro-debias-survey", "0.0145", math.sqrt(0.3 * 0.7 / 1000)),
    ("intro-debias-survey", "2.14", math.sqrt(0.4 * 0.6 / 1000) / (2 * 3 / 4 - 1)
     / math.sqrt(0.3 * 0.7 / 1000)),
    ("intro-four-answers", "1.946", ln(0.7 / (0.3 / 3))),
    ("intro-textbook-rr", "36.9", next(e / 10 for e in range(500)
                                       if math.exp(e / 10) / (1 + math.exp(e / 10)) == 1.0)),
    ("intro-textbook-rr", "709.78", math.log(1.7976931348623157e308)),
    ("intro-lying-more", "0.847", ln(0.7 / 0.3)),
    # "yes" reports 0.3 against 1 - 0.6, "no" reports 0.7 against 0.6: the worst ratio is 4/3
    ("intro-lying-more", "0.288", ln(max(0.3 / 0.4, 0.4 / 0.3, 0.7 / 0.6, 0.6 / 0.7))),
]


@pytest.mark.parametrize("qid, printed, value", NUMBERS, ids=[f"{q}:{p}" for q, p, _ in NUMBERS])
def test_model_answer_numbers_are_recomputed(qid, printed, value):
    assert qid in BY_ID, qid
    text = BY_ID[qid].question + "\n" + BY_ID[qid].answer     # a value given, or computed
    assert printed in text, f"{qid}: {printed!r} is in neither the question nor the answer"
    if isinstance(value, Fraction):
        shown = {Fraction(1, 2): "\\tfrac12", Fraction(1, 3): "\\tfrac13"}[value]
        assert shown == printed
        return
    decimals = len(printed.partition(".")[2])
    assert f"{float(value):.{decimals}f}" == printed, (qid, value)


# "\ln 320 = 5\ln 2 + \ln 10": a logarithm identity written in a model answer, every term an
# integer multiple of the logarithm of a number.
_LN = r"(?:\d+\s*)?\\ln\s*\d+(?:\.\d+)?"
_LN_IDENTITY = re.compile(rf"\\ln\s*(\d+(?:\.\d+)?)\s*=\s*({_LN}(?:\s*\+\s*{_LN})*)(?![\d.])")


def _ln_terms(text: str) -> float:
    total = 0.0
    for term in re.split(r"\s*\+\s*", text):
        factor, _, argument = term.partition("\\ln")
        total += int(factor or 1) * math.log(float(argument))
    return total


def test_logarithm_identities_in_model_answers_hold():
    """Every identity such as ``\\ln 20 = \\ln 2 + \\ln 10`` in a model answer is true (a
    printed value can be right while the identity beside it is wrong: ln 40 is not ln 20)."""
    found = [(q.id, m.group(0), float(m.group(1)), m.group(2))
             for q in BY_ID.values() for m in _LN_IDENTITY.finditer(q.answer)]
    assert {qid for qid, *_ in found} >= {"laplace-histogram-interval"}, found
    assert len(found) >= 2, found
    for qid, shown, argument, terms in found:
        assert _ln_terms(terms) == pytest.approx(math.log(argument), rel=1e-12), (qid, shown)


def test_the_over_calibrated_gaussian_release_is_058_dp():
    # gaussian-bad-code: sigma = c * 12 / 2 for Delta_2 = sqrt(12) is the classic sigma of
    # epsilon = 1/sqrt(3) < 1, so the theorem applies there and certifies (0.58, 1e-6).
    from dpkit.gaussian_calibration import classic_sigma

    sigma = math.sqrt(2 * ln(1.25e6)) * 12 / 2
    assert classic_sigma(math.sqrt(12), 1 / math.sqrt(3), 1e-6) == pytest.approx(sigma, rel=1e-12)
    assert classic_sigma(math.sqrt(12), 0.58, 1e-6) <= sigma
    with pytest.raises(ValueError):
        classic_sigma(math.sqrt(12), 2.0, 1e-6)


def test_the_exact_zcdp_total_is_seven():
    # 1 + 2 sqrt(1 * 9) = 7 exactly; dpkit rounds up by at most an ulp or so.
    assert zcdp_to_dp(1.0, math.exp(-9)) == pytest.approx(7, rel=1e-12)


def test_advanced_composition_ties_basic_at_forty():
    # composition-crossover-1-5: equality at k = 40, strictly below from 41 on.
    eps = math.log(1.5)
    total = [math.sqrt(2 * k * 5) * eps + k * eps * 0.5 for k in (40, 41)]
    assert total[0] == pytest.approx(40 * eps, rel=1e-12) and total[1] < 41 * eps


def test_released_noisy_answer_costs_a_quarter_epsilon_per_query_below():
    # sparse-vector-release-answer: T = 0, answers 0 on D, q_1..q_{m-1} lowered by 1 on D';
    # the density of the output (m, v) for v <= -1 is e^((m-1) eps/4) times larger on D'.
    from scipy import integrate
    from scipy.stats import laplace

    assert "e^{(m-1)\\varepsilon/4}" in BY_ID["sparse-vector-release-answer"].answer
    eps, m = 1.0, 3

    def density(answers, v):
        def inner(t):
            below = math.prod(laplace.cdf(t - q, scale=4 / eps) for q in answers[:-1])
            return laplace.pdf(t, scale=2 / eps) * below
        return laplace.pdf(v - answers[-1], scale=4 / eps) * integrate.quad(inner, -80, v)[0]

    for v in (-1.0, -3.0):
        ratio = density([-1.0] * (m - 1) + [0.0], v) / density([0.0] * m, v)
        assert ratio == pytest.approx(math.exp((m - 1) * eps / 4), rel=1e-9)


def test_a_grid_step_that_does_not_divide_one_breaks_sensitivity():
    # sparse-vector-grid-rounding: r(x) = floor(x/gamma + 1/2); gamma = 2^-3 keeps two values
    # one apart exactly 1 apart, gamma = 0.3 moves 0.1 and 1.1 to 0 and 1.2.
    def rounded(x, gamma):
        return gamma * math.floor(x / gamma + Fraction(1, 2))

    assert "$q(D) = 0.1$ and $q(D') = 1.1$" in BY_ID["sparse-vector-grid-rounding"].answer
    x, step = Fraction(1, 10), Fraction(3, 10)
    assert (rounded(x, step), rounded(x + 1, step)) == (0, Fraction(6, 5))
    assert "$q(D) = 0.9$ and $q(D') = 1.9$" in BY_ID["sparse-vector-grid-rounding"].answer
    assert (rounded(Fraction(9, 10), 2), rounded(Fraction(19, 10), 2)) == (0, 2)      # gamma = 2
    for k in range(50):
        y = Fraction(k, 7) - 3
        assert rounded(y + 1, Fraction(1, 8)) - rounded(y, Fraction(1, 8)) == 1


def test_absorption_makes_498_outcomes_impossible_without_underflow():
    # exponential-base2-no-underflow: the naive code's exact output distribution; on the
    # neighbour 373 of the 498 become possible (not all: past 1.0 the spacing doubles).
    import numpy as np

    import dpkit.naive

    answer = BY_ID["exponential-base2-no-underflow"].answer
    assert "498 of the other 499" in answer and "373 of the\n498" in answer
    d, d_prime = np.full(500, 76.0), np.full(500, 75.0)
    d[0], d_prime[0] = 0.0, 1.0
    on_d = dpkit.naive.exponential_mechanism_probabilities(d, 1.0)
    on_d_prime = dpkit.naive.exponential_mechanism_probabilities(d_prime, 1.0)
    impossible = [i for i in range(1, 500) if on_d[i] == 0]
    assert len(impossible) == 498 and on_d[-1] > 0
    assert sum(on_d_prime[i] > 0 for i in impossible) == 373
    assert 1 - on_d[0] < 1e-13
    assert np.exp(-38) > 0                        # no underflow anywhere


def test_laplace_noisy_max_of_two_is_not_the_exponential_mechanism():
    # exponential-base2-laplace-noisy-max: the closed form against the chapter's integration.
    from dpkit.plots.exponential import noisy_max_probabilities

    answer = BY_ID["exponential-base2-laplace-noisy-max"].answer
    assert answer.startswith("False") and "candidate *loses* when the other's noise" in answer
    laplace = noisy_max_probabilities([2.0, 0.0], 1.0, "laplace")[0]       # g = 2b
    gumbel = noisy_max_probabilities([2.0, 0.0], 1.0, "gumbel")[0]
    assert laplace == pytest.approx(1 - math.exp(-2), abs=1e-6)
    assert gumbel == pytest.approx(1 / (1 + math.exp(-2)), abs=1e-6)


def _run_question_code(qid: str, call: str, max_calls: int = 200):
    """Execute the code block of question ``qid`` and return the value of ``call`` in it; its
    ``profile`` is counted, so a loop that never stops fails instead of hanging."""
    code = re.search(r"```python\n(.*?)```", BY_ID[qid].question, re.DOTALL).group(1)
    namespace: dict = {"math": math}
    exec(code, namespace)
    profile, calls = namespace["profile"], []

    def counted(*args):
        calls.append(args)
        assert len(calls) <= max_calls, f"{qid}: {call} does not stop"
        return profile(*args)

    namespace["profile"] = counted
    return eval(call, namespace), calls


def test_the_bisection_question_returns_what_the_answer_says():
    # analytic-gaussian-erf-bisection: the question's own code, run. It accepts its second
    # midpoint 7.50025, whose true delta is about 9.0e-16 = 9.0e4 x the target 1e-20: too
    # little noise, below the analytic 8.838; the bracket [1e-3, 1e3] would stop at 500.
    answer = BY_ID["analytic-gaussian-erf-bisection"].answer
    assert "$7.50025$" in answer and "$5.0005$" in answer and "unsafe" in answer
    sigma, calls = _run_question_code("analytic-gaussian-erf-bisection", "calibrate(1.0, 1e-20)")
    assert [args[0] for args in calls[::2]] == [5.0005, 7.500249999999999]
    true_delta = delta_for_sigma(sigma, 1.0, 1.0)
    assert sigma < analytic_sigma(1.0, 1.0, 1e-20) and true_delta > 1e-20     # unsafe
    assert f"{true_delta:.1e}" == "9.0e-16" and "9.0\\cdot10^{-16}" in answer
    assert f"{true_delta / 1e-20:.1e}" == "9.0e+04" and "9.0\\cdot10^{4}" in answer
    computed = [calls[0][0], calls[2][0]]
    profile = [_run_question_code("analytic-gaussian-erf-bisection", f"profile({s}, 1.0)")[0]
               for s in computed]
    assert f"{profile[0]:.1e}" == "1.7e-08" and f"{profile[1]:.1e}" == "9.4e-16"
    assert "1.7\\cdot10^{-8}" in answer and "9.4\\cdot10^{-16}" in answer
    wide, _ = _run_question_code("analytic-gaussian-erf-bisection", "calibrate(1.0, 1e-20, hi=1e3)")
    assert wide == 500.0005 and "57 times" in answer
    assert round(wide / analytic_sigma(1.0, 1.0, 1e-20)) == 57


def test_one_plus_erf_loses_phi_of_minus_nine():
    # analytic-gaussian-erf-bisection: the naive Phi returns 0 where Phi(-9) ~ 1.13e-19, and
    # the absolute tolerance accepts a profile 1e8 times the target 1e-20.
    answer = BY_ID["analytic-gaussian-erf-bisection"].answer
    assert "10^{8}" in answer
    assert 0.5 * (1 + math.erf(-9 / math.sqrt(2))) == 0.0 < norm.cdf(-9)
    assert (1e-12 + 1e-20) / 1e-20 == pytest.approx(1e8)
    assert delta_for_sigma(analytic_sigma(1.0, 1.0, 1e-20), 1.0, 1.0) <= 1e-20


def test_the_error_rates_are_dpkits_tradeoff_and_guessing_bounds():
    # promise-test-error-rates: the smallest beta at alpha = 0.05, and the best guess.
    from dpkit.audit import guessing_bound, tradeoff_bound

    answer = BY_ID["promise-test-error-rates"].answer
    assert "0.85" in answer and "0.84" in answer and "0.7525" in answer
    assert tradeoff_bound(0.05, ln(3)) == pytest.approx(0.85, rel=1e-12)
    assert tradeoff_bound(0.05, ln(3), 0.01) == pytest.approx(0.84, rel=1e-12)
    assert guessing_bound(ln(3), 0.01) == pytest.approx(0.7525, rel=1e-12)


def test_publishing_each_record_with_probability_q_costs_delta_q():
    # promise-delta-size: publishing each record independently with probability q is exactly
    # (0, q)-DP under add/remove (the smallest delta at any eps >= 0 is q, computed over every
    # set of outputs); at q = 1e-3 and n = 32,561 it publishes 32.6 records a run on average.
    from itertools import combinations

    answer = BY_ID["promise-delta-size"].answer
    assert "(0, q)$-DP" in answer and "32.6" in answer
    q, records = Fraction(1, 1000), ("a", "b", "c")

    def outputs(data):
        law = {}
        for size in range(len(data) + 1):
            for kept in combinations(data, size):
                law[frozenset(kept)] = q ** size * (1 - q) ** (len(data) - size)
        return law

    d, d_prime = outputs(records[:2]), outputs(records)

    def smallest_delta(p, r, factor):        # sup_S p(S) - factor r(S), over every set S
        return sum(max(0, p.get(o, 0) - factor * r.get(o, 0)) for o in set(p) | set(r))

    for factor in (1, Fraction(2718, 1000)):          # eps = 0 and (below) eps = 1
        assert smallest_delta(d_prime, d, factor) == q
        assert smallest_delta(d, d_prime, factor) <= q
    assert f"{1e-3 * 32561:.1f}" == "32.6"


def test_four_answer_randomized_response_and_the_debiasing_match_dpkit():
    # intro-four-answers (p = 0.7, q = 0.1 costs eps = ln 7) and intro-debias-survey.
    from dpkit.randomized_response import debias, truth_probability

    assert "$p/q = 7 \\le e^{\\varepsilon}$" in BY_ID["intro-four-answers"].answer
    p, q = Fraction(7, 10), Fraction(1, 10)
    assert p + 3 * q == 1 and p / q == 7
    assert math.exp(ln(7)) / (math.exp(ln(7)) + 4 - 1) == pytest.approx(0.7, rel=1e-12)
    assert float(truth_probability(ln(3))) == pytest.approx(0.75, rel=1e-15)
    assert float(truth_probability(ln(3))) <= 0.75          # rounded down, never up
    assert debias(0.4, ln(3)) == pytest.approx(0.3, rel=1e-12)


# -- the map of learning goals to questions (course/exams/goals.md) -------------------------

GOALS = exam.BANK / "goals.md"
_GOAL_ROW = re.compile(r"^\| (?P<goal>[^|]+?) \| (?P<ids>[^|]+?) \|$")
NO_QUESTION = "no exam question"


def _goal_rows() -> list[tuple[str, str, str]]:
    """The rows of the goals-to-questions map: (chapter, goal, cell of question ids)."""
    rows, chapter = [], None
    for line in GOALS.read_text().splitlines():
        if line.startswith("## "):
            chapter = line[3:].strip()
        elif line.startswith("| ") and not line.startswith(("| learning goal |", "| --- |")):
            match = _GOAL_ROW.match(line)
            assert match and chapter, f"{GOALS.name}: a row outside a chapter's table: {line!r}"
            rows.append((chapter, match["goal"], match["ids"]))
    return rows


def _goals_map() -> dict[str, dict[str, list[str]]]:
    """chapter -> learning goal -> the ids of the questions that assess it."""
    found: dict[str, dict[str, list[str]]] = {}
    for chapter, goal, cell in _goal_rows():
        ids = [] if cell == NO_QUESTION else re.findall(r"`([^`]+)`", cell)
        assert cell == NO_QUESTION or cell == ", ".join(f"`{i}`" for i in ids), cell
        assert goal not in found.setdefault(chapter, {}), f"{chapter}: {goal!r} twice"
        found[chapter][goal] = ids
    return found


def _goals_fingerprints() -> set[str]:
    """What of the map a student must not see: each row's list of question ids, and each
    sentence of its prose (its goals are the teaching page's, so they are not counted)."""
    text = GOALS.read_text()
    prose = "\n".join(line for line in text.splitlines() if not line.startswith(("|", "#")))
    return {cell for _, _, cell in _goal_rows() if cell != NO_QUESTION} | _sentences(prose)


def test_every_question_serves_a_goal_of_its_chapter_in_the_teaching_map():
    from test_teaching_map import map_rows

    assert "goals" not in exam.bank_chapters()              # never read as a chapter's bank
    taught: dict[str, set[str]] = {}
    for row in map_rows():
        taught.setdefault(row["chapter"], set()).add(row["goal"])
    goals = _goals_map()
    assert list(goals) == list(QUESTIONS), "one table per chapter of the bank, in its order"
    for chapter, rows in goals.items():
        assert set(rows) == taught.get(chapter, set()), (
            f"{chapter}: the goals must be the teaching page's map's, word for word; "
            f"unknown {sorted(set(rows) - taught.get(chapter, set()))}, "
            f"missing {sorted(taught.get(chapter, set()) - set(rows))}")
        bank = {q.id for q in QUESTIONS[chapter]}
        named = {qid for ids in rows.values() for qid in ids}
        assert named <= bank, f"{chapter}: not questions of its bank: {sorted(named - bank)}"
        assert bank <= named, f"{chapter}: questions that serve no goal: {sorted(bank - named)}"
    unassessed = sorted(goal for rows in goals.values() for goal, ids in rows.items() if not ids)
    assert unassessed == [], f"goals no exam question assesses: {unassessed}"


def test_a_broken_goals_map_is_found(tmp_path, monkeypatch):
    """The map's test can fail: a goal reworded, an id mistyped, a question left out."""
    from test_teaching_map import map_rows

    text = GOALS.read_text()
    broken = [text.replace("| proving group privacy |", "| group privacy |"),
              text.replace("`laplace-tight`, ", "`laplace-tigth`, "),
              text.replace(", `laplace-timing-leak`", "")]
    for version in broken:
        assert version != text
        path = tmp_path / "goals.md"
        path.write_text(version)
        monkeypatch.setattr(sys.modules[__name__], "GOALS", path)
        with pytest.raises(AssertionError):
            test_every_question_serves_a_goal_of_its_chapter_in_the_teaching_map()
    assert map_rows()


# -- nothing of the bank reaches a student -------------------------------------------------

def _sentences(text: str) -> set[str]:
    """The bank's sentences of 40 characters or more, whitespace collapsed."""
    flat = re.sub(r"\s+", " ", text)
    return {s.strip() for s in re.split(r"(?<=[.:;?!])\s", flat) if len(s.strip()) >= 40}


def _fingerprints() -> set[str]:
    found = set()
    for questions in QUESTIONS.values():
        for q in questions:
            for text in (q.question, q.answer, q.rubric):
                found |= _sentences(text)
    return found


def _leaks(texts: dict[str, str], prints: set[str]) -> dict[str, list[str]]:
    leaks = {}
    for name, text in texts.items():
        flat = re.sub(r"\s+", " ", text)
        found = sorted(p for p in prints if p in flat)
        if found:
            leaks[name] = found[:2]
    return leaks


def _student_texts(book: Path, out: Path) -> dict[str, str]:
    """The texts a student receives from the book at ``book``: its sources, the student
    notebooks of ``make notebooks`` and the assignments of ``make assignments`` (their
    nbgrader source notebooks, of which the released copies keep a part)."""
    from dpkit.course.assignments import assignment_notebook
    from dpkit.course.myst import read_book
    from dpkit.course.notebooks import export

    texts = {str(p): p.read_text() for p in sorted(book.glob("*.md"))}
    for path in export(book, out):
        if path.parent.name == "student":
            texts[str(path)] = "\n".join(c.source for c in nbformat.read(path, 4).cells)
    parsed = read_book(book)
    for chapter in parsed.chapters:
        notebook = assignment_notebook(chapter.path, parsed)
        if notebook is not None:
            texts[f"assignment {chapter.stem}"] = "\n".join(c.source for c in notebook.cells)
    return texts


def test_no_exam_text_in_any_student_build(tmp_path):
    prints = _fingerprints()
    assert len(prints) > 100
    goals = _goals_fingerprints()
    assert len(goals) > 30 and not goals & prints
    assert _leaks(_student_texts(ROOT / "book", tmp_path), prints | goals) == {}


def test_a_leak_into_a_chapter_is_found(tmp_path):
    """The leak check can fail: one model-answer sentence pasted into a chapter is found in
    the book's sources, the student notebook and the assignment. (The check compares text:
    a sentence rewritten on its way into a notebook, such as one with a ``{prf:ref}``, would
    need its rewritten form.)"""
    import shutil

    book = tmp_path / "book"
    shutil.copytree(ROOT / "book", book, ignore=shutil.ignore_patterns("_build", "vendor"))
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    sentence = min(p for p in _fingerprints() if not re.search(r"[$`{}\\]", p))
    # and a row of the goals-to-questions map: its list of question ids
    row = next(p for p in _goals_fingerprints() if p.startswith("`laplace-") and ", " in p)
    text = (book / "laplace.md").read_text()
    label = ":label: ex-laplace-sum-count\n\n"          # into an exercise: the assignments too
    assert label in text
    (book / "laplace.md").write_text(text.replace(label, f"{label}{sentence}\n\n{row}\n\n"))
    leaks = _leaks(_student_texts(book, tmp_path / "out"), {sentence, row})
    assert {Path(name).name for name in leaks} >= {"laplace.md", "laplace.ipynb"}, leaks
    assert "assignment laplace" in leaks
    assert all(set(found) == {sentence, row} for found in leaks.values()), leaks


# -- make exam -------------------------------------------------------------------------------

def test_assembles_an_exam_and_a_key_for_two_chapters(tmp_path):
    questions = exam.load(["gaussian", "laplace"])
    assert list(questions) == ["laplace", "gaussian"]          # the book's order
    total = sum(q.points for qs in questions.values() for q in qs)
    count = sum(map(len, questions.values()))
    sheet = exam.render_html(questions, key=False, at=tmp_path)
    key = exam.render_html(questions, key=True, at=tmp_path)
    for page in (sheet, key):
        assert f"{count} questions, {total} points" in page
        numbers = [int(n) for n in re.findall(r"<h3>Question (\d+) \(\d+ points?\)", page)]
        assert numbers == list(range(1, count + 1))
        assert "{prf:ref}" not in page and "{ref}" not in page
        assert '<span class="math">\\(' in page
        script = re.search(r'<script defer src="([^"]+)"', page).group(1)
        assert (tmp_path / script).resolve() == exam.MATHJAX.resolve()
    display = '<div class="math">\\[\na &lt; b\n\\]</div>\n'
    assert exam.markdown_renderer().render("$$\na < b\n$$") == display
    assert sheet.count('class="exam-space"') == count
    assert "Model answer" not in sheet and "Rubric" not in sheet
    for q in (q for qs in questions.values() for q in qs):
        assert f'id="{q.id}"' in sheet and f"[{q.id}, " in key
    answer = exam.markdown_renderer().render(exam.resolve_references(
        BY_ID["laplace-tight"].answer, exam.book_labels()))
    assert answer in key and answer not in sheet
    assert "Theorem “Accuracy of the Laplace mechanism”" in key


def test_every_chapter_of_the_bank_assembles(tmp_path):
    # make exam CHAPTERS=intro,promise,...: every reference resolves and every question prints.
    chapters = exam.book_chapters()[:len(REQUIRED)]
    assert chapters == list(REQUIRED)
    questions = exam.load(["sparse_vector", "intro", *chapters])
    assert list(questions) == chapters
    key = exam.render_html(questions, key=True, at=tmp_path)
    count = sum(map(len, questions.values()))
    assert f"{count} questions" in key and count >= 8 * len(chapters)
    assert "{prf:ref}" not in key and "{ref}" not in key
    assert "Algorithm “AboveThreshold”" in key and "Definition “Local differential privacy”" in key


def test_an_unknown_chapter_is_refused_with_the_valid_ones(capsys):
    with pytest.raises(ValueError, match=r"unknown chapter 'lapalce'.*laplace, gaussian"):
        exam.load(["lapalce", "gaussian"])
    assert exam.main(["lapalce", "--no-pdf"]) == 2
    err = capsys.readouterr().err
    assert "unknown chapter 'lapalce'" in err and "composition" in err


def test_an_unknown_label_is_refused():
    with pytest.raises(ValueError, match="unknown label 'thm-nothing'"):
        exam.resolve_references("{prf:ref}`thm-nothing`", exam.book_labels())


@pytest.mark.browser
def test_prints_the_exam_and_key_to_pdf(tmp_path):
    import shutil
    import subprocess

    from test_browser import CHROMIUM, _require

    _require(CHROMIUM is not None, "no chromium on PATH (apt-get install chromium)")
    _require(exam.MATHJAX.is_file(), f"MathJax not vendored at {exam.MATHJAX} (make vendor)")
    _require(shutil.which("pdftotext") is not None, "no pdftotext (apt-get install poppler-utils)")
    written = exam.build(["gaussian"], tmp_path)
    assert [p.name for p in written] == ["exam.html", "key.html", "exam.pdf", "key.pdf"]
    text = subprocess.run(["pdftotext", str(tmp_path / "key.pdf"), "-"], check=True,
                          capture_output=True, text=True).stdout
    assert "Question 1 (3 points)" in text and "Model answer" in text
    assert "Δ" in text and "\\Delta" not in text, "raw TeX printed"
