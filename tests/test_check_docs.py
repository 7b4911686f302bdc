"""Students read a checker's docstring (``dpkit.check.check_sum_count_sensitivity?``) and its
failing verdicts: both say what is checked and what is wrong, never the answer."""

from __future__ import annotations

import inspect
import math

import pytest

import dpkit.check
from dpkit.composition import advanced
from dpkit.exponential import Eta, compute_precision

CHECKERS = sorted(name for name in dir(dpkit.check) if name.startswith("check_"))

# What each docstring must not say: the answer's formula, or a function that computes it.
ANSWERS = {
    "check_sum_count_sensitivity": ("max(|lower|", "|upper|) + 1", "the answer is"),
    "check_laplace_interval": ("ln(1/(1", "log(1", "the answer is"),
    "check_grid_scale": ("floor(Δ/g) + d", "laplace_grid", "the answer is"),
    "check_sparse_scales": ("2c/ε", "4c/ε", "ε/c"),
    "check_little_noise_cost": ("1 + 6c", "3ε/4", "ε/4 for"),
    "check_classic_sigma": ("1.25", "sqrt(2", "classic_sigma"),
    "check_delta_for_sigma": ("delta_for_sigma",),
    "check_analytic_sigma": ("analytic_sigma", "delta_for_sigma"),
    "check_advanced_composition": ("e^ε − 1", "sqrt(2k", "k ε²"),
    "check_crossover": ("e^ε >= 2", "e^ε ≥ 2"),
    "check_precision": ("compute_precision", "bitlen", "Y·K"),
    "check_auto_avg": ("3b/ε", "sensitivity 1", "(the\n    chosen bound ``b``) requires"),
}


def test_there_are_checkers_and_each_is_documented() -> None:
    assert len(CHECKERS) >= 29
    for name in CHECKERS:
        doc = inspect.getdoc(getattr(dpkit.check, name))
        assert doc and doc.startswith("Check "), name
        assert "the answer is" not in doc.lower(), name


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_docstrings_describe_the_check_not_the_answer(name: str) -> None:
    doc = inspect.getdoc(getattr(dpkit.check, name)) or ""
    raw = getattr(dpkit.check, name).__doc__ or ""
    for phrase in ANSWERS[name]:
        assert phrase not in doc and phrase not in raw, (name, phrase)


def _thm_3_20(epsilon: float, k: int, delta_prime: float) -> float:
    return math.sqrt(2 * k * math.log(1 / delta_prime)) * epsilon + k * epsilon * math.expm1(
        epsilon)


def test_advanced_composition_verdicts_hide_the_total() -> None:
    assert dpkit.check.check_advanced_composition(_thm_3_20).passed
    want = f"{advanced(0.1, 0.0, 100, 1e-6)[0]:.4f}"[:5]          # "6.308"
    wrong = {
        "first term": lambda e, k, d: math.sqrt(2 * k * math.log(1 / d)) * e,
        "k·ε²": lambda e, k, d: math.sqrt(2 * k * math.log(1 / d)) * e + k * e * e,
        "basic": lambda e, k, d: k * e,
        "10% more": lambda e, k, d: 1.1 * _thm_3_20(e, k, d),
    }
    for why, fn in wrong.items():
        verdict = dpkit.check.check_advanced_composition(fn)
        assert not verdict.passed, why
        assert want not in str(verdict), why
        assert "expm1" not in str(verdict) and "e^ε − 1" not in str(verdict), why
    first = dpkit.check.check_advanced_composition(wrong["first term"])
    assert "too small" in first.message and "second term" in first.message


def test_crossover_verdict_keeps_the_reason_for_none_to_the_student() -> None:
    verdict = dpkit.check.check_crossover(lambda e, d: 3)
    assert not verdict.passed
    verdict = dpkit.check.check_crossover(lambda e, d: None)
    assert not verdict.passed and "e^ε ≥ 2" not in str(verdict)


@pytest.mark.parametrize("bounds", [(0, 100, 1000), (0, 10, 5), (-7, 30, 64)])
def test_precision_verdicts_hide_the_bound_whatever_the_inputs(bounds) -> None:
    """The student chooses the inputs: a verdict that printed the bound would be an oracle."""
    eta = Eta.from_epsilon(1.0)
    right = compute_precision(*bounds, eta)
    assert dpkit.check.check_precision(right, *bounds, eta).passed
    for wrong in (0, right - 1, right + 1, 2 * right):
        verdict = dpkit.check.check_precision(wrong, *bounds, eta)
        assert not verdict.passed
        assert str(right) not in str(verdict).replace(f"{wrong} bits", "")


def test_l2_pass_leaves_the_written_part_to_the_student() -> None:
    """The written exercise after it asks how the ℓ2 sensitivity compares with the ℓ1
    sensitivity: a passing verdict does not answer it."""
    verdict = dpkit.check.check_l2_sensitivity(lambda k, c: c * math.sqrt(k))
    assert verdict.passed and "ℓ1" not in verdict.message and "√k" not in verdict.message
