"""Checkers of the intro and promise chapters: right answers pass, wrong ones fail with a
verdict that names the problem but does not contain the answer (formula or value)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import dpkit.check
from dpkit.audit import guessing_bound, tradeoff_bound


def _e(x: float) -> float:
    return math.exp(x)


def _no_answer(verdict, *answers: str) -> None:
    text = str(verdict)
    for answer in answers:
        assert answer not in text, f"verdict gives away {answer!r}: {text}"


def test_truth_probability() -> None:
    assert dpkit.check.check_truth_probability(lambda e: _e(e) / (1 + _e(e)))
    too_private = dpkit.check.check_truth_probability(lambda e: 0.5 + e / 100)
    not_private = dpkit.check.check_truth_probability(lambda e: _e(2 * e) / (1 + _e(2 * e)))
    assert not too_private and "noisier than needed" in too_private.message
    assert not not_private and "not ε-DP" in not_private.message
    _no_answer(not_private, "e^ε/(1+e^ε)", f"{_e(0.1) / (1 + _e(0.1)):.6f}")
    assert not dpkit.check.check_truth_probability(lambda e: "half")
    assert "raised" in dpkit.check.check_truth_probability(lambda e: 1 / 0).message


def test_debias() -> None:
    def right(y, e):
        p = _e(e) / (1 + _e(e))
        return (y - (1 - p)) / (2 * p - 1)

    assert dpkit.check.check_debias(right)
    identity = dpkit.check.check_debias(lambda y, e: y)
    assert not identity and "expected share" in identity.message
    _no_answer(identity, f"{right(0.3, 0.1):.6f}", f"{right(0.3, 0.1):.4g}")
    clipped = dpkit.check.check_debias(lambda y, e: min(1.0, max(0.0, right(y, e))))
    assert not clipped and "leave [0, 1]" in clipped.message


def test_rr_epsilon() -> None:
    assert dpkit.check.check_rr_epsilon(lambda p: abs(math.log(p / (1 - p))))
    signed = dpkit.check.check_rr_epsilon(lambda p: math.log(p / (1 - p)))
    assert not signed and "never negative" in signed.message
    ratio = dpkit.check.check_rr_epsilon(lambda p: p / (1 - p))
    assert not ratio and "larger than needed" in ratio.message
    _no_answer(ratio, "log", "ln")


def test_kary_truth_probability() -> None:
    assert dpkit.check.check_kary_truth_probability(lambda e, k: _e(e) / (_e(e) + k - 1))
    binary = dpkit.check.check_kary_truth_probability(lambda e, k: _e(e) / (_e(e) + 1))
    assert not binary and "k=3" in binary.message and "not ε-DP" in binary.message
    _no_answer(binary, "k − 1", "k - 1")


def test_guessing_accuracy() -> None:
    assert dpkit.check.check_guessing_accuracy(lambda e, d: (_e(e) + d) / (1 + _e(e)))
    no_delta = dpkit.check.check_guessing_accuracy(lambda e, d: _e(e) / (1 + _e(e)))
    assert not no_delta and "δ term matters" in no_delta.message and "too low" in no_delta.message
    too_high = dpkit.check.check_guessing_accuracy(lambda e, d: (_e(e) + 2 * d) / (1 + _e(e)))
    assert not too_high and "higher than any" in too_high.message
    out_of_range = dpkit.check.check_guessing_accuracy(lambda e, d: 1 - _e(e))
    assert not out_of_range and "between 1/2" in out_of_range.message
    _no_answer(no_delta, f"{guessing_bound(0.1, 1e-5):.6f}")


def test_tradeoff() -> None:
    assert dpkit.check.check_tradeoff(tradeoff_bound)
    one_sided = dpkit.check.check_tradeoff(lambda a, e, d: max(0.0, 1 - d - _e(e) * a))
    assert not one_sided and "below what DP allows" in one_sided.message
    loose = dpkit.check.check_tradeoff(lambda a, e, d: max(0.0, 1 - d - a))
    assert not loose
    negative = dpkit.check.check_tradeoff(lambda a, e, d: 2 - a)
    assert not negative and "not a probability" in negative.message
    _no_answer(one_sided, "e^-ε", "max(")


@pytest.mark.parametrize("wrong, phrase", [
    (lambda e, ep: _e(e) / (1 + _e(e)) - _e(ep) / (1 + _e(e)), "no δ is needed"),
    (lambda e, ep: 1 - _e(ep - e), "larger than needed"),
    (lambda e, ep: 0.0, "too small"),
])
def test_rr_delta(wrong, phrase) -> None:
    assert dpkit.check.check_rr_delta(
        lambda e, ep: max(0.0, _e(e) / (1 + _e(e)) - _e(ep) / (1 + _e(e))))
    verdict = dpkit.check.check_rr_delta(wrong)
    assert not verdict and phrase in verdict.message


def test_passing_verdicts_list_every_case_tried() -> None:
    """A passing verdict names the hard cases too (k = 10, δ = 0.2, p < 1/2), not only the
    first, easy ones."""
    kary = str(dpkit.check.check_kary_truth_probability(lambda e, k: _e(e) / (_e(e) + k - 1)))
    assert "k=2" in kary and "k=10" in kary
    guess = str(dpkit.check.check_guessing_accuracy(lambda e, d: (_e(e) + d) / (1 + _e(e))))
    assert "delta=0:" in guess and "delta=0.2" in guess
    trade = str(dpkit.check.check_tradeoff(tradeoff_bound))
    assert "delta=0.2" in trade and "alpha = 0, 0.01" in trade
    rr = str(dpkit.check.check_rr_delta(
        lambda e, ep: max(0.0, _e(e) / (1 + _e(e)) - _e(ep) / (1 + _e(e)))))
    assert "epsilon=4" in rr
    eps = str(dpkit.check.check_rr_epsilon(lambda p: abs(math.log(p / (1 - p)))))
    assert "p=0.1:" in eps
    debiased = str(dpkit.check.check_debias(
        lambda y, e: (y - 1 / (1 + _e(e))) / (2 * _e(e) / (1 + _e(e)) - 1)))
    assert "epsilon=5" in debiased


def test_truth_probability_below_one_half_matches_the_exercise() -> None:
    """ex-intro-truth asks for p > 1/2; the equally private p < 1/2 is refused as such."""
    verdict = dpkit.check.check_truth_probability(lambda e: 1 / (1 + _e(e)))
    assert not verdict and "below 1/2" in verdict.message and "above 1/2" in verdict.message
    text = (Path(__file__).resolve().parent.parent / "book" / "intro.md").read_text()
    assert "probability $p > 1/2$ of answering" in text
