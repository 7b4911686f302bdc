"""What exponential_base2 and sparse_vector print before their exercises is not the exercises'
answers, and what they state is what the code does (a student review found both). All
checks are deterministic (text of the chapters, exact arithmetic)."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from dpkit.exponential import Eta, compute_precision
from dpkit.plots.svt import audit_figure

BOOK = Path(__file__).resolve().parent.parent / "book"


def _text(chapter: str) -> str:
    return (BOOK / f"{chapter}.md").read_text(encoding="utf-8")


def _before_exercises(chapter: str) -> str:
    return _text(chapter).split("\n## Exercises\n")[0]


def _exercise(chapter: str, label: str) -> str:
    """The statement and the solution of exercise ``label``."""
    text = _text(chapter)
    start = text.index(f":label: {label}\n")
    return text[start:text.index("```{solution-end}", start)]


def _check_args(source: str, checker: str) -> tuple:
    """The number arguments of the last ``dpkit.check.<checker>(...)`` call in ``source``."""
    call = re.findall(rf"dpkit\.check\.{checker}\([^()]*\)", source)[-1]
    numbers = []
    for argument in ast.parse(call).body[0].value.args:
        try:
            numbers.append(ast.literal_eval(argument))
        except ValueError:              # a name (the answer, an Eta)
            continue
    return tuple(numbers)


def test_from_epsilon_rule_is_stated_and_matches_the_code() -> None:
    """The text said the *base* gets about `bits` significant bits, which the printed y
    column contradicts (ε = 0.1 gives y = 14); it now states the rule of the code."""
    text = _before_exercises("exponential_base2")
    assert r"\lceil -\log_2 \eta^* \rceil" in text and r"\lceil \eta^* \rceil" in text
    assert "the base\n$x \\cdot 2^{-y}$ has about `bits`" not in text
    for epsilon, delta in [(0.1, 1), (0.5, 1), (1.0, 1), (1.0, 2), (2.0, 1), (30.0, 1)]:
        target = epsilon / (2 * math.log(2) * delta)
        y = 10 + max(0, math.ceil(target), math.ceil(-math.log2(target)))
        eta = Eta.from_epsilon(epsilon, delta)
        assert Eta(eta.x * 2 ** (y - eta.y), y).eta == eta.eta   # the rule's y, reduced
    # the worked example of the text: ε = 0.1, η* ≈ 0.072, ⌈−log2 η*⌉ = 4, y = 14
    assert "$\\eta^* \\approx 0.072$" in text and "y = 14" in text
    assert round(0.1 / (2 * math.log(2)), 3) == 0.072
    assert math.ceil(-math.log2(0.1 / (2 * math.log(2)))) == 4 and Eta.from_epsilon(0.1).y == 14
    assert Eta.from_epsilon(0.5).y == 11           # "the rule gives y = 12 and the table 11"


def test_precision_exercise_is_not_a_row_of_the_precision_table() -> None:
    """ex-exp-precision asked for [0, 100], n = 1000 at Eta(1243, 11): a row the chapter's
    precision table printed (analytic 1110) just before."""
    text = _text("exponential_base2")
    table = re.search(r"for low, high, n in (\[.*?\]):", text)[1]
    rows = {(low, high, n) for low, high, n in eval(table, {})}
    exercise = _exercise("exponential_base2", "ex-exp-precision")
    args = _check_args(exercise, "check_precision")
    assert args[:3] not in rows
    low, high, n = args[:3]
    assert all(compute_precision(low, high, n, Eta(1243, 11))
               != compute_precision(a, b, m, Eta(1243, 11)) for a, b, m in rows)


def test_eta_exercise_is_not_a_row_of_the_from_epsilon_table() -> None:
    """ex-exp-eta asked for ε = 1, Δ = 2 at y = 12: the same η as the from_epsilon table's
    rows (1.0, 2) and (0.5, 1), Eta(1595, 11) = Eta(3190, 12)."""
    text = _text("exponential_base2")
    table = re.search(r"for epsilon, sensitivity in (\[.*?\]):", text)[1]
    printed = {Eta.from_epsilon(e, d).eta for e, d in eval(table, {})}
    epsilon, delta = _check_args(_exercise("exponential_base2", "ex-exp-eta"),
                                 "check_eta_choice")
    x = math.ceil(2 ** (12 - epsilon / (2 * math.log(2) * delta)))
    while Eta(x, 12).epsilon(delta) > epsilon:
        x += 1
    while Eta(x - 1, 12).epsilon(delta) <= epsilon:
        x -= 1
    assert Eta(x, 12).eta not in printed


def test_little_noise_cost_is_left_to_its_exercise() -> None:
    """sparse_vector printed (1 + 6c)ε/4, its derivation and 3.25 for c = 2 before the
    exercises ex-svt-little-noise and ex-svt-little-noise-audit that ask for them."""
    text = _before_exercises("sparse_vector")
    for answer in ("1+6c", "1 + 6c", "3\\varepsilon/4$", "= 3.25", "3.25ε"):
        assert answer not in text, answer
    assert 'exercise = "little_query_noise"' in text
    assert '"an exercise" if shown is None' in text


def test_random_index_privacy_is_left_to_its_exercise() -> None:
    text = _before_exercises("sparse_vector")
    assert "post-processing ({prf:ref}`thm-post-processing`) keeps the guarantee" not in text
    assert "{ref}`ex-svt-random-index`" in text


def test_audit_figure_can_leave_a_true_epsilon_to_the_reader() -> None:
    """A true ε of None is written "an exercise" (it was float-only: np.isinf(None))."""
    figure = audit_figure({"broken": (1.0, 1.4, None), "correct": (1.0, 0.0, 1.0),
                           "no privacy": (1.0, 3.0, math.inf)})
    texts = [t.get_text() for t in figure.axes[0].texts]
    assert texts == ["true ε: an exercise", "true ε = 1", "true ε = ∞"]
    assert "3.25" not in figure.get_label() + "".join(texts)
